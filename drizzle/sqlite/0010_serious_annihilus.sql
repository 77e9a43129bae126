CREATE TABLE `realtime_phone_links` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`key_id` text NOT NULL,
	`profile_id` text NOT NULL,
	`carrier` text NOT NULL,
	`token_hash` text NOT NULL,
	`credential` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `realtime_phone_links_token_idx` ON `realtime_phone_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `realtime_phone_links_profile_idx` ON `realtime_phone_links` (`tenant_id`,`profile_id`);