CREATE TABLE "custom_voices" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"key_id" text NOT NULL,
	"provider" text NOT NULL,
	"model" text,
	"name" text NOT NULL,
	"description" text,
	"language" text,
	"status" text NOT NULL,
	"failure_reason" text,
	"fee_credits" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "custom_voices" ADD CONSTRAINT "custom_voices_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "custom_voices_tenant_idx" ON "custom_voices" USING btree ("tenant_id","created_at");