-- The monthly review's counts, kept as entries are recorded, so that a month is reviewed from
-- its counts instead of grouping its entries (a million entries took seconds three ways).
-- They are kept by a statement trigger from what each statement inserted (COPY included), in
-- the writer's transaction: an entry and its counts are committed together or not at all.
-- Writers of one organization already take its chain head's lock first, so its counts are
-- written one transaction at a time. Nothing else writes them but the retention job, which
-- counts again the months whose entries it removed (recruitd_recount_review).
--
-- Entries per account, quarter hour of access_time (whole quarter hours since the Unix epoch,
-- as the review divides them, truncated), activity category and subject type: every zone's
-- month and every work-hours boundary on a quarter hour is a run of whole quarters.
--
-- Texts a client chose (a category, an imported address) are keyed by their SHA-256: an index
-- row holds at most about 2.7 kB, and no text may make a write fail.
CREATE TABLE privacy_review_slots (
    organization_id uuid NOT NULL,
    slot bigint NOT NULL,
    account_id uuid NOT NULL,
    subject_type text NOT NULL,
    category_key bytea NOT NULL,
    activity_category text NOT NULL,
    entries bigint NOT NULL,
    bulk_records bigint NOT NULL,
    first_position bigint,
    PRIMARY KEY (organization_id, slot, account_id, subject_type, category_key)
);

-- Each account's data subjects and addresses per UTC month of access_time, with the first and
-- last access of the month: whether one was accessed within any window that no UTC month
-- strictly contains (a month in any zone) is `last_at >= start AND first_at < end` on the
-- months it overlaps.
CREATE TABLE privacy_review_subjects (
    organization_id uuid NOT NULL,
    month date NOT NULL,
    account_id uuid NOT NULL,
    subject_id uuid NOT NULL,
    first_at timestamptz NOT NULL,
    last_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, month, account_id, subject_id)
);

CREATE TABLE privacy_review_addresses (
    organization_id uuid NOT NULL,
    month date NOT NULL,
    account_id uuid NOT NULL,
    address_key bytea NOT NULL,
    address text NOT NULL,
    first_at timestamptz NOT NULL,
    last_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, month, account_id, address_key)
);

-- The review lists a month's downloads one by one.
CREATE INDEX privacy_audit_logs_downloads ON privacy_audit_logs (organization_id, access_time)
    WHERE activity_category = 'DOWNLOAD';

-- The statements that add the entries of the relation `added` to the counts, for EXECUTE
-- where that relation is visible (a statement's transition table is, only in its trigger's
-- function). Rows go in key order: two writers never wait for each other in a cycle.
CREATE FUNCTION recruitd_review_counts_sql(added text) RETURNS text LANGUAGE sql IMMUTABLE
AS $$
    SELECT format($q$
        INSERT INTO privacy_review_slots AS s (organization_id, slot, account_id, subject_type,
            category_key, activity_category, entries, bulk_records, first_position)
        SELECT organization_id,
               CAST(date_part('epoch', access_time) * 1000000 AS BIGINT) / 900000000,
               account_id, subject_type, sha256(convert_to(activity_category, 'UTF8')),
               activity_category, count(*),
               CAST(LEAST(coalesce(sum(bulk_count), 0), 9223372036854775807) AS BIGINT),
               min(position)
        FROM %1$s GROUP BY 1, 2, 3, 4, 6 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (organization_id, slot, account_id, subject_type, category_key)
        DO UPDATE SET entries = s.entries + excluded.entries,
            bulk_records = CAST(LEAST(CAST(s.bulk_records AS numeric) + excluded.bulk_records,
                                      9223372036854775807) AS BIGINT),
            first_position = LEAST(s.first_position, excluded.first_position);
        INSERT INTO privacy_review_subjects AS s (organization_id, month, account_id, subject_id,
            first_at, last_at)
        SELECT organization_id, CAST(date_trunc('month', access_time AT TIME ZONE 'UTC') AS date),
               account_id, coalesce(subject_user_id, subject_candidate_id),
               min(access_time), max(access_time)
        FROM %1$s WHERE coalesce(subject_user_id, subject_candidate_id) IS NOT NULL
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (organization_id, month, account_id, subject_id)
        DO UPDATE SET first_at = LEAST(s.first_at, excluded.first_at),
            last_at = GREATEST(s.last_at, excluded.last_at)
        WHERE excluded.first_at < s.first_at OR excluded.last_at > s.last_at;
        INSERT INTO privacy_review_addresses AS s (organization_id, month, account_id,
            address_key, address, first_at, last_at)
        SELECT organization_id, CAST(date_trunc('month', access_time AT TIME ZONE 'UTC') AS date),
               account_id, sha256(convert_to(a.address, 'UTF8')), a.address,
               min(access_time), max(access_time)
        FROM %1$s, unnest(ip_addresses) AS a(address)
        GROUP BY 1, 2, 3, 5 ORDER BY 1, 2, 3, 4
        ON CONFLICT (organization_id, month, account_id, address_key)
        DO UPDATE SET first_at = LEAST(s.first_at, excluded.first_at),
            last_at = GREATEST(s.last_at, excluded.last_at)
        WHERE excluded.first_at < s.first_at OR excluded.last_at > s.last_at;
    $q$, added);
$$;

CREATE FUNCTION recruitd_count_for_review() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE recruitd_review_counts_sql('added');
    RETURN NULL;
END;
$$;
CREATE TRIGGER privacy_audit_logs_review_counts AFTER INSERT ON privacy_audit_logs
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION recruitd_count_for_review();

-- Counts again, from the entries recorded since `removed_before`, every UTC month of every
-- organization that has entries recorded before it: retention calls it before it removes
-- those. Returns how many months were counted.
CREATE FUNCTION recruitd_recount_review(removed_before timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    o uuid;
    m date;
    first timestamptz;
    next timestamptz;
    counted integer := 0;
BEGIN
    FOR o, m IN
        SELECT DISTINCT organization_id,
               CAST(date_trunc('month', access_time AT TIME ZONE 'UTC') AS date)
        FROM privacy_audit_logs WHERE recorded_at < removed_before ORDER BY 1, 2
    LOOP
        first := CAST(m AS timestamp) AT TIME ZONE 'UTC';
        next := CAST(m + interval '1 month' AS timestamp) AT TIME ZONE 'UTC';
        DELETE FROM privacy_review_slots WHERE organization_id = o
            AND slot >= CAST(date_part('epoch', first) AS BIGINT) / 900
            AND slot < CAST(date_part('epoch', next) AS BIGINT) / 900;
        DELETE FROM privacy_review_subjects WHERE organization_id = o AND month = m;
        DELETE FROM privacy_review_addresses WHERE organization_id = o AND month = m;
        CREATE TEMP TABLE recount ON COMMIT DROP AS
            SELECT * FROM privacy_audit_logs WHERE organization_id = o
                AND access_time >= first AND access_time < next
                AND recorded_at >= removed_before;
        EXECUTE recruitd_review_counts_sql('recount');
        DROP TABLE recount;
        counted := counted + 1;
    END LOOP;
    RETURN counted;
END;
$$;

-- The entries recorded so far.
DO $$ BEGIN EXECUTE recruitd_review_counts_sql('privacy_audit_logs'); END $$;
