-- The Rewind catalog's database, next to Airflow's (docker-compose.yaml).
CREATE USER rewind WITH PASSWORD 'rewind';
CREATE DATABASE rewind OWNER rewind;
