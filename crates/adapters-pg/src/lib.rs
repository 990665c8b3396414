//! The PostgreSQL storage adapter of recruitd (in progress).
