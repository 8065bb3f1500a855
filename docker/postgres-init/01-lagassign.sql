-- Runs once, when the postgres volume is created: the audit store's own database and role,
-- next to Airflow's metadata database (POSTGRES_DB=airflow).
-- The password must match LAGASSIGN_DB_URL in docker-compose.yml.
CREATE ROLE lagassign WITH LOGIN PASSWORD 'lagassign';
CREATE DATABASE lagassign OWNER lagassign;
