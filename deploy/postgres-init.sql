-- Run once by the postgres image on an empty data volume (/docker-entrypoint-initdb.d),
-- as the superuser: one login and one database for Airflow's metadata, one for the Rewind
-- catalog (docker-compose.yaml: AIRFLOW__DATABASE__SQL_ALCHEMY_CONN, REWIND_CATALOG_URL).
-- Each login owns its database, so it may create its tables in the public schema
-- (PostgreSQL 15+ grants that to the database owner only) and nothing else.
-- The passwords are the demo values of docker-compose.yaml; change both places together.
CREATE USER airflow WITH PASSWORD 'airflow';
CREATE DATABASE airflow OWNER airflow;

CREATE USER rewind WITH PASSWORD 'rewind';
CREATE DATABASE rewind OWNER rewind;
