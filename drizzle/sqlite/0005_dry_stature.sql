CREATE TABLE `custom_voices` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`key_id` text NOT NULL,
	`provider` text NOT NULL,
	`model` text,
	`name` text NOT NULL,
	`description` text,
	`language` text,
	`status` text NOT NULL,
	`failure_reason` text,
	`fee_credits` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `custom_voices_tenant_idx` ON `custom_voices` (`tenant_id`,`created_at`);