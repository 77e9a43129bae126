CREATE TABLE `voice_sightings` (
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`voice` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `model`, `voice`)
);
--> statement-breakpoint
ALTER TABLE `activity` ADD `voice` text;--> statement-breakpoint
CREATE INDEX `activity_voice_started_idx` ON `activity` (`voice`,`started_at`);