CREATE TABLE "voice_sightings" (
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"voice" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	CONSTRAINT "voice_sightings_provider_model_voice_pk" PRIMARY KEY("provider","model","voice")
);
--> statement-breakpoint
ALTER TABLE "activity" ADD COLUMN "voice" text;--> statement-breakpoint
CREATE INDEX "activity_voice_started_idx" ON "activity" USING btree ("voice","started_at");