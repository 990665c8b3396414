-- Retention cannot be undone: removed entries are gone.
SELECT 1;
