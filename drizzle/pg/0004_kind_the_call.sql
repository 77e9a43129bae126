ALTER TABLE "realtime_client_secrets" ALTER COLUMN "profile_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "realtime_client_secrets" ADD COLUMN "session" text;