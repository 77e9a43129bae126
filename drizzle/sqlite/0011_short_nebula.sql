CREATE TABLE `pronunciation_dictionaries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`latest_version_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`archived_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `pronunciation_dictionaries_tenant_idx` ON `pronunciation_dictionaries` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `pronunciation_dictionary_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`dictionary_id` text NOT NULL,
	`rules` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`dictionary_id`) REFERENCES `pronunciation_dictionaries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `pronunciation_dictionary_versions_dictionary_idx` ON `pronunciation_dictionary_versions` (`dictionary_id`);