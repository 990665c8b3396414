CREATE OR REPLACE FUNCTION recruitd_count_for_review() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE recruitd_review_counts_sql('added');
    RETURN NULL;
END;
$$;
