DROP TABLE log_streams;
