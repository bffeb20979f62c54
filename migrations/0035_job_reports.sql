-- What a clocked job last did (issue 35): e.g. `{"examined":1000,"removed":12}` for the retention jobs, shown in
-- the healthcheck's job stats.
ALTER TABLE `job_heartbeats` ADD `last_result` text;
