CREATE TABLE "realtime_phone_links" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"key_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"carrier" text NOT NULL,
	"token_hash" text NOT NULL,
	"credential" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "realtime_phone_links" ADD CONSTRAINT "realtime_phone_links_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "realtime_phone_links_token_idx" ON "realtime_phone_links" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "realtime_phone_links_profile_idx" ON "realtime_phone_links" USING btree ("tenant_id","profile_id");