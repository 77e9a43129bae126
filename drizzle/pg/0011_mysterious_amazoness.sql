CREATE TABLE "pronunciation_dictionaries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"latest_version_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"archived_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "pronunciation_dictionary_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"dictionary_id" text NOT NULL,
	"rules" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pronunciation_dictionaries" ADD CONSTRAINT "pronunciation_dictionaries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pronunciation_dictionary_versions" ADD CONSTRAINT "pronunciation_dictionary_versions_dictionary_id_pronunciation_dictionaries_id_fk" FOREIGN KEY ("dictionary_id") REFERENCES "public"."pronunciation_dictionaries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pronunciation_dictionaries_tenant_idx" ON "pronunciation_dictionaries" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "pronunciation_dictionary_versions_dictionary_idx" ON "pronunciation_dictionary_versions" USING btree ("dictionary_id");