ALTER TABLE "api_keys" ADD COLUMN "limits" text;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "limits" text;