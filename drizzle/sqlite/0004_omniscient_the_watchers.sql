PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_realtime_client_secrets` (
	`hash` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`key_id` text NOT NULL,
	`profile_id` text,
	`session` text,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_realtime_client_secrets`("hash", "tenant_id", "key_id", "profile_id", "session", "expires_at", "used_at") SELECT "hash", "tenant_id", "key_id", "profile_id", NULL, "expires_at", "used_at" FROM `realtime_client_secrets`;--> statement-breakpoint
DROP TABLE `realtime_client_secrets`;--> statement-breakpoint
ALTER TABLE `__new_realtime_client_secrets` RENAME TO `realtime_client_secrets`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `realtime_client_secrets_expires_idx` ON `realtime_client_secrets` (`expires_at`);