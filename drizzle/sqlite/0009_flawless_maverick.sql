ALTER TABLE `api_keys` ADD `limits` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `limits` text;