//! The queries of a month's review (`Ledgers::review_facts`), for both stores: the grouping
//! statements as SQL text with the few spellings a backend has of its own ([`Dialect`]);
//! [`crate::review_counts!`] and [`crate::review_lists!`], the two halves of the facts, which
//! a store may read on two connections sharing a snapshot, and [`crate::review_facts!`],
//! which reads both on one, where the adapter's schema and rows are in scope; and the review's
//! two writes, [`crate::decide_download!`] and [`crate::sign_off!`].

/// What a backend spells its own way in the review's statements.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// The `n`th parameter (`$1` or `?1`).
    pub param: fn(usize) -> String,
    /// `access_time` as microseconds since the epoch, an integer.
    pub micros: &'static str,
    /// A `FROM` item, `a`, that yields every address of a row of `privacy_audit_logs`.
    pub addresses: &'static str,
    /// The address of a row of `a`.
    pub address: &'static str,
    /// The sum of a group's `bulk_count`s as a `BIGINT`, the largest one where it is larger:
    /// counts come from clients, and two of the largest overflow a plain sum.
    pub bulk_sum: &'static str,
    /// The SQL before and after a parameter holding an address, true when a row of
    /// `privacy_audit_logs` recorded that address.
    pub has_address: (&'static str, &'static str),
    /// The SQL after a UUID column and around a parameter holding a list of UUIDs
    /// ([`crate::filter::Value::Uuids`]), true when the column holds one of them: an array on
    /// PostgreSQL, a JSON array of their hex digits on SQLite.
    pub in_ids: (&'static str, &'static str),
    /// The SQL before and after a UUID column that reads it as its 16 bytes.
    pub id_bytes: (&'static str, &'static str),
    /// Whether the store keeps the review's counts as entries are recorded (PostgreSQL's
    /// `privacy_review_slots`, `privacy_review_subjects` and `privacy_review_addresses`),
    /// which the months [`kept_serve`] accepts are read from instead of the entries.
    pub kept: bool,
}

impl Dialect {
    /// PostgreSQL's: `access_time` in double precision, exact to the microsecond until 2106
    /// and far cheaper than `extract`'s numeric; the addresses of an array.
    pub const POSTGRES: Self = Self {
        param: |n| format!("${n}"),
        micros: "CAST(date_part('epoch', access_time) * 1000000 AS BIGINT)",
        addresses: "unnest(ip_addresses) AS a(address)",
        address: "a.address",
        bulk_sum: "CAST(LEAST(coalesce(sum(bulk_count), 0), 9223372036854775807) AS BIGINT)",
        has_address: ("", " = ANY(ip_addresses)"),
        in_ids: (" = ANY(", ")"),
        id_bytes: ("uuid_send(", ")"),
        kept: true,
    };

    /// SQLite's: `access_time` stored as microseconds; the addresses of a JSON array.
    pub const SQLITE: Self = Self {
        param: |n| format!("?{n}"),
        micros: "access_time",
        addresses: "json_each(privacy_audit_logs.ip_addresses) AS a",
        address: "a.value",
        bulk_sum: "CAST(min(total(bulk_count), 9223372036854775807.0) AS INTEGER)",
        has_address: (
            "EXISTS (SELECT 1 FROM json_each(privacy_audit_logs.ip_addresses) WHERE value = ",
            ")",
        ),
        in_ids: (" IN (SELECT unhex(value) FROM json_each(", "))"),
        id_bytes: ("", ""),
        kept: false,
    };
}

/// The width of the kept counts' slots: a quarter hour, in microseconds.
pub const KEPT_SLOT_MICROS: i64 = 900_000_000;

/// Whether the counts `d`'s store keeps give `q`'s facts exactly: its slots are whole kept
/// slots, the month and the month before begin and end on them, and neither window lies
/// strictly inside one UTC month (an account's subjects and addresses are kept per UTC month
/// with their first and last access, which tell whether a window that begins or ends at a
/// month's edge holds one, not whether a window in its middle does). A month in any zone of
/// today's tz database, with work hours on quarter hours, is served.
pub fn kept_serve(d: Dialect, q: &recruit_ports::review::ReviewQuery) -> bool {
    let quarter = |t: recruit_domain::Timestamp| t.unix_micros() % KEPT_SLOT_MICROS == 0;
    let edged = |from: recruit_domain::Timestamp, to: recruit_domain::Timestamp| {
        let month = |t: recruit_domain::Timestamp| {
            let t = t.as_datetime().naive_utc().date();
            chrono::Datelike::with_day(&t, 1)
                .map(|first| (first, first.checked_add_months(chrono::Months::new(1))))
        };
        let last = recruit_domain::Timestamp::from_unix_micros(to.unix_micros() - 1).ok();
        match (month(from), last.and_then(month)) {
            (Some((a, Some(next))), Some((b, _))) if a == b => {
                let day = |t: recruit_domain::Timestamp| t.as_datetime().naive_utc();
                let midnight = |d: chrono::NaiveDate| d.and_hms_opt(0, 0, 0);
                Some(day(from)) == midnight(a) || Some(day(to)) == midnight(next)
            }
            (Some(_), Some(_)) => true,
            _ => false,
        }
    };
    d.kept
        && q.slot_micros > 0
        && q.slot_micros % KEPT_SLOT_MICROS == 0
        && [q.previous_from, q.from, q.to].into_iter().all(quarter)
        && edged(q.from, q.to)
        && (q.previous_from == q.from || edged(q.previous_from, q.from))
}

/// The month's entries counted per account, slot, activity category and subject type; from
/// the kept counts (PostgreSQL's only) when `kept`, a row per kept slot. The parameters: the
/// organization, the month's first instant, the next month's, the slot width in microseconds.
pub fn slots_sql(d: Dialect, kept: bool) -> String {
    let p = d.param;
    if kept {
        // A subquery, evaluated once: `date_part` of a `timestamptz` is only stable, so a
        // plain expression is evaluated again for every row.
        let quarter = |n| {
            format!(
                "(SELECT CAST(date_part('epoch', {}) * 1000000 AS BIGINT) / {KEPT_SLOT_MICROS})",
                p(n)
            )
        };
        // Not grouped again by the wider slot: the rows add up in the service, which costs
        // less than grouping them here.
        return format!(
            "SELECT account_id, slot / ({w} / {KEPT_SLOT_MICROS}) AS slot, activity_category, \
             subject_type, entries, bulk_records, first_position \
             FROM privacy_review_slots \
             WHERE organization_id = {org} AND slot >= {from} AND slot < {to}",
            w = p(4),
            org = p(1),
            from = quarter(2),
            to = quarter(3),
        );
    }
    format!(
        "SELECT account_id, CAST({micros} / {w} AS BIGINT) AS slot, activity_category, \
         subject_type, CAST(count(*) AS BIGINT) AS entries, \
         {bulk_sum} AS bulk_records, \
         min(position) AS first_position \
         FROM privacy_audit_logs \
         WHERE organization_id = {org} AND access_time >= {from} AND access_time < {to} \
         GROUP BY account_id, slot, activity_category, subject_type",
        micros = d.micros,
        bulk_sum = d.bulk_sum,
        w = p(4),
        org = p(1),
        from = p(2),
        to = p(3),
    )
}

/// The UTC months, as kept, from the month of parameter `a` through that of the instant
/// before parameter `b` (PostgreSQL).
fn kept_months(column: &str, p: fn(usize) -> String, a: usize, b: usize) -> String {
    format!(
        "{column} >= CAST(date_trunc('month', {a} AT TIME ZONE 'UTC') AS date) \
         AND {column} <= CAST(date_trunc('month', ({b} - interval '1 microsecond') \
         AT TIME ZONE 'UTC') AS date)",
        a = p(a),
        b = p(b),
    )
}

/// Per account, the distinct users and candidates the month's entries name; from the kept
/// counts when `kept`. The parameters: the organization, the month's first instant, the next
/// month's.
pub fn subjects_sql(d: Dialect, kept: bool) -> String {
    let p = d.param;
    if kept {
        return format!(
            "SELECT account_id, CAST(count(DISTINCT subject_id) AS BIGINT) AS subjects \
             FROM privacy_review_subjects \
             WHERE organization_id = {org} AND {months} AND last_at >= {from} AND first_at < {to} \
             GROUP BY account_id",
            org = p(1),
            months = kept_months("month", p, 2, 3),
            from = p(2),
            to = p(3),
        );
    }
    format!(
        "SELECT account_id, CAST(count(*) AS BIGINT) AS subjects \
         FROM (SELECT DISTINCT account_id, coalesce(subject_user_id, subject_candidate_id) AS s \
               FROM privacy_audit_logs \
               WHERE organization_id = {} AND access_time >= {} AND access_time < {}) d \
         WHERE s IS NOT NULL \
         GROUP BY account_id",
        p(1),
        p(2),
        p(3),
    )
}

/// Per account, the addresses of the month not seen in the month before; from the kept
/// counts when `kept`, where an address used in two UTC months of the month comes twice. The
/// parameters: the organization, the month's first instant, the next month's, the first
/// instant of the month before.
pub fn new_addresses_sql(d: Dialect, kept: bool) -> String {
    let p = d.param;
    if kept {
        return format!(
            "SELECT account_id, address FROM privacy_review_addresses m \
             WHERE organization_id = {org} AND {months} AND last_at >= {from} AND first_at < {to} \
             AND NOT EXISTS (SELECT 1 FROM privacy_review_addresses b \
                 WHERE b.organization_id = {org} AND {before} AND b.account_id = m.account_id \
                 AND b.address_key = m.address_key AND b.last_at >= {previous} \
                 AND b.first_at < {from} \
                 AND {previous} < {from})",
            org = p(1),
            months = kept_months("month", p, 2, 3),
            before = kept_months("b.month", p, 4, 2),
            from = p(2),
            to = p(3),
            previous = p(4),
        );
    }
    format!(
        "SELECT account_id, {address} AS address \
         FROM privacy_audit_logs, {addresses} \
         WHERE organization_id = {org} AND access_time >= {previous} AND access_time < {to} \
         GROUP BY account_id, {address} \
         HAVING max(CASE WHEN access_time >= {from} THEN 1 ELSE 0 END) = 1 \
         AND max(CASE WHEN access_time < {from} THEN 1 ELSE 0 END) = 0",
        addresses = d.addresses,
        address = d.address,
        org = p(1),
        from = p(2),
        to = p(3),
        previous = p(4),
    )
}

/// Declares the rows of the review's grouping statements, the account id of type `$uuid`
/// (SQL type `$uuid_sql`).
#[macro_export]
macro_rules! review_rows {
    ($uuid:ty as $uuid_sql:ty) => {
        /// A row of the slots' statement.
        #[derive(diesel::QueryableByName)]
        struct SlotRow {
            #[diesel(sql_type = $uuid_sql)]
            account_id: $uuid,
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            slot: i64,
            #[diesel(sql_type = diesel::sql_types::Text)]
            activity_category: String,
            #[diesel(sql_type = diesel::sql_types::Text)]
            subject_type: String,
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            entries: i64,
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            bulk_records: i64,
            #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
            first_position: Option<i64>,
        }

        /// A row of the subjects' statement.
        #[derive(diesel::QueryableByName)]
        struct SubjectRow {
            #[diesel(sql_type = $uuid_sql)]
            account_id: $uuid,
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            subjects: i64,
        }

        /// A row of the new addresses' statement.
        #[derive(diesel::QueryableByName)]
        struct AddressRow {
            #[diesel(sql_type = $uuid_sql)]
            account_id: $uuid,
            #[diesel(sql_type = diesel::sql_types::Text)]
            address: String,
        }
    };
}

/// Reads the counted half of `recruit_ports::review::ReviewFacts` for `$q` (a `&ReviewQuery`)
/// on `$c`: the slots, the subjects and the first position, the other fields left empty; see
/// [`crate::review_facts!`] for the arguments. The counted and the listed halves
/// ([`crate::review_lists!`]) read from one snapshot make the facts, [`merge`]d.
#[macro_export]
macro_rules! review_counts {
    ($c:ident, $q:expr, $d:expr, $org:expr => $uuid_sql:ty, $time:expr => $time_sql:ty, $uuid:expr
     $(, .$await:tt)?) => {{
        use diesel::sql_types::BigInt;
        use ::recruit_ports::review::{ReviewFacts, SlotCount};
        let q: &::recruit_ports::review::ReviewQuery = $q;
        let (org, from, to) = ($org, $time(q.from), $time(q.to));
        let kept = $crate::review::kept_serve($d, q);
        let slots = diesel::sql_query($crate::review::slots_sql($d, kept))
            .bind::<$uuid_sql, _>(org.clone())
            .bind::<$time_sql, _>(from.clone())
            .bind::<$time_sql, _>(to.clone())
            .bind::<BigInt, _>(q.slot_micros)
            .load::<SlotRow>($c)$(.$await)??;
        let subjects = diesel::sql_query($crate::review::subjects_sql($d, kept))
            .bind::<$uuid_sql, _>(org)
            .bind::<$time_sql, _>(from)
            .bind::<$time_sql, _>(to)
            .load::<SubjectRow>($c)$(.$await)??;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        let first_position = slots.iter().filter_map(|r| r.first_position).min();
        let uuid = $uuid;
        let facts: Result<ReviewFacts, ::recruit_ports::StoreError> = (|| {
            Ok(ReviewFacts {
                slots: slots
                    .into_iter()
                    .map(|r| {
                        Ok(SlotCount::new(
                            uuid(r.account_id)?,
                            r.slot,
                            r.activity_category,
                            &r.subject_type,
                            count(r.entries),
                            count(r.bulk_records),
                        ))
                    })
                    .collect::<Result<_, ::recruit_ports::StoreError>>()?,
                subjects: subjects
                    .into_iter()
                    .map(|r| Ok((uuid(r.account_id)?, count(r.subjects))))
                    .collect::<Result<_, ::recruit_ports::StoreError>>()?,
                first_position,
                ..ReviewFacts::default()
            })
        })();
        facts
    }};
}

/// Reads the listed half of `recruit_ports::review::ReviewFacts` for `$q` on `$c`: the new
/// addresses, the downloads, the ledger exports, the decisions and the sign-off, the other
/// fields left empty; see [`crate::review_facts!`] for the arguments.
#[macro_export]
macro_rules! review_lists {
    ($c:ident, $q:expr, $d:expr, $org:expr => $uuid_sql:ty, $time:expr => $time_sql:ty, $uuid:expr
     $(, .$await:tt)?) => {{
        use ::recruit_ports::review::ReviewFacts;
        let q: &::recruit_ports::review::ReviewQuery = $q;
        let (org, from, to) = ($org, $time(q.from), $time(q.to));
        let kept = $crate::review::kept_serve($d, q);
        let addresses = diesel::sql_query($crate::review::new_addresses_sql($d, kept))
            .bind::<$uuid_sql, _>(org.clone())
            .bind::<$time_sql, _>(from.clone())
            .bind::<$time_sql, _>(to.clone())
            .bind::<$time_sql, _>($time(q.previous_from))
            .load::<AddressRow>($c)$(.$await)??;
        let downloads = privacy_audit_logs::table
            .filter(privacy_audit_logs::organization_id.eq(org.clone()))
            .filter(privacy_audit_logs::access_time.ge(from.clone()))
            .filter(privacy_audit_logs::access_time.lt(to.clone()))
            .filter(privacy_audit_logs::activity_category.eq(q.download))
            .order((privacy_audit_logs::access_time, privacy_audit_logs::id))
            .select(LedgerRow::as_select())
            .load::<LedgerRow>($c)$(.$await)??;
        let exports = api_audit_log::table
            .filter(api_audit_log::organization_id.eq(org.clone()))
            .filter(api_audit_log::at.ge(from))
            .filter(api_audit_log::at.lt(to))
            .filter(api_audit_log::operation.eq(q.ledger_export))
            .order((api_audit_log::at, api_audit_log::id))
            .select(AuditRow::as_select())
            .load::<AuditRow>($c)$(.$await)??;
        let decisions = privacy_download_decisions::table
            .filter(privacy_download_decisions::organization_id.eq(org.clone()))
            .filter(privacy_download_decisions::month.eq(&q.month))
            .order((privacy_download_decisions::decided_at, privacy_download_decisions::id))
            .select(DownloadDecisionRow::as_select())
            .load::<DownloadDecisionRow>($c)$(.$await)??;
        let sign_off = privacy_review_sign_offs::table
            .filter(privacy_review_sign_offs::organization_id.eq(org))
            .filter(privacy_review_sign_offs::month.eq(&q.month))
            .select(SignOffRow::as_select())
            .load::<SignOffRow>($c)$(.$await)??;
        let sign_off = sign_off.into_iter().next();
        let uuid = $uuid;
        let facts: Result<ReviewFacts, ::recruit_ports::StoreError> = (|| {
            Ok(ReviewFacts {
                new_addresses: addresses
                    .into_iter()
                    .map(|r| Ok((uuid(r.account_id)?, r.address)))
                    .collect::<Result<_, ::recruit_ports::StoreError>>()?,
                downloads: downloads
                    .into_iter()
                    .map(|r| r.into_neutral()?.into_entry())
                    .collect::<Result<_, _>>()?,
                ledger_exports: exports
                    .into_iter()
                    .map(|r| r.into_neutral()?.into_entry())
                    .collect::<Result<_, _>>()?,
                decisions: decisions
                    .into_iter()
                    .map(|r| Ok(r.into_neutral()?.into_decision()))
                    .collect::<Result<_, ::recruit_ports::StoreError>>()?,
                sign_off: sign_off.map(|r| r.into_neutral()).transpose()?.map(|r| r.into_sign_off()),
                ..ReviewFacts::default()
            })
        })();
        facts
    }};
}

/// The facts of a review from its counted half ([`crate::review_counts!`]) and its listed half
/// ([`crate::review_lists!`]), both read from one snapshot.
pub fn merge(
    counts: recruit_ports::review::ReviewFacts,
    lists: recruit_ports::review::ReviewFacts,
) -> recruit_ports::review::ReviewFacts {
    recruit_ports::review::ReviewFacts {
        new_addresses: lists.new_addresses,
        downloads: lists.downloads,
        ledger_exports: lists.ledger_exports,
        decisions: lists.decisions,
        sign_off: lists.sign_off,
        ..counts
    }
}

/// Reads `recruit_ports::review::ReviewFacts` for `$q` (a `&ReviewQuery`) inside the caller's
/// snapshot, one statement after the other on `$c`: [`crate::review_counts!`], then
/// [`crate::review_lists!`]. `$d` is the backend's [`Dialect`], `$org` the organization as
/// stored and bound as `$uuid_sql`, `$time` turns a `Timestamp` into its stored value bound as
/// `$time_sql`, and `$uuid` reads a stored account id back (an expression of type
/// `Fn(stored) -> Result<Uuid, StoreError>`). Needs `review_rows!` and the adapter's schema and
/// rows in scope. Evaluates to the facts or the first error, converted with `?`.
#[macro_export]
macro_rules! review_facts {
    ($c:ident, $q:expr, $d:expr, $org:expr => $uuid_sql:ty, $time:expr => $time_sql:ty, $uuid:expr
     $(, .$await:tt)?) => {{
        let org = $org;
        let counts = $crate::review_counts!(
            $c, $q, $d, org.clone() => $uuid_sql, $time => $time_sql, $uuid $(, .$await)?
        );
        match counts {
            Ok(counts) => $crate::review_lists!(
                $c, $q, $d, org => $uuid_sql, $time => $time_sql, $uuid $(, .$await)?
            )
            .map(|lists| $crate::review::merge(counts, lists)),
            Err(e) => Err(e),
        }
    }};
}

/// `pair`, typed as two values of `like`'s type: what a query of two columns stored like it
/// returns.
pub fn stored_like<T>(_like: &T, pair: (T, T)) -> (T, T) {
    pair
}

/// The body of `Ledgers::decide_download` for `$w` (a `&DecisionWrite`), in the caller's
/// transaction on `$c`: `$org`, `$entry` and `$decider` are the organization, the entry and
/// the deciding user's account as stored (a download of the decider's own is refused),
/// `$time` turns a `Timestamp` into its stored value, `$chain` links the record's rows, and
/// `$lock` (PostgreSQL's `for_update`) locks the download's row, so that decisions on one
/// entry are taken one after the other (SQLite's write transaction holds the whole store).
/// Needs the adapter's schema, rows and `insert_rows!` in scope. Evaluates to the outcome or
/// the first error, converted with `?`.
#[macro_export]
macro_rules! decide_download {
    ($c:ident, $w:expr, $org:expr, $entry:expr, $decider:expr, $time:expr, $chain:path
     $(, $lock:ident)? $(, .$await:tt)?) => {{
        use ::recruit_ports::review::Decided;
        let w: &::recruit_ports::review::DecisionWrite = $w;
        let download = privacy_audit_logs::table
            .filter(privacy_audit_logs::organization_id.eq($org.clone()))
            .filter(privacy_audit_logs::id.eq($entry.clone()))
            .filter(privacy_audit_logs::activity_category.eq(w.download))
            .filter(privacy_audit_logs::access_time.ge($time(w.from)))
            .filter(privacy_audit_logs::access_time.lt($time(w.to)))
            .select((privacy_audit_logs::id, privacy_audit_logs::account_id))
            $(.$lock())?
            .first($c)$(.$await)?;
        let download = diesel::OptionalExtension::optional(download)?;
        match download.map(|pair| $crate::review::stored_like(&$entry, pair)) {
            Some((id, _)) if id != $entry.clone() => {
                return Err(::recruit_ports::StoreError::NotFound.into());
            }
            None => return Err(::recruit_ports::StoreError::NotFound.into()),
            Some((_, account)) => match w.author {
                ::recruit_ports::review::Author::Reviewer if account == $decider => {
                    return Ok(Decided::OwnDownload);
                }
                ::recruit_ports::review::Author::Downloader { .. } if account != $decider => {
                    return Ok(Decided::NotAsked);
                }
                _ => {}
            },
        }
        let latest = privacy_download_decisions::table
            .filter(privacy_download_decisions::organization_id.eq($org.clone()))
            .filter(privacy_download_decisions::entry_id.eq($entry.clone()))
            .order((privacy_download_decisions::decided_at.desc(), privacy_download_decisions::id.desc()))
            .select(DownloadDecisionRow::as_select())
            .first($c)$(.$await)?;
        let latest: Option<DownloadDecisionRow> = diesel::OptionalExtension::optional(latest)?;
        let latest = latest.map(|r| r.into_neutral()).transpose()?.map(|r| r.into_decision());
        let asked = match w.author {
            ::recruit_ports::review::Author::Downloader { asked } => Some(asked),
            ::recruit_ports::review::Author::Reviewer => None,
        };
        Ok(match latest {
            Some(d) if d.status == w.decision.status && d.reason == w.decision.reason => {
                Decided::Unchanged(d)
            }
            Some(d) if asked.is_some_and(|asked| d.status != asked) => Decided::NotAsked,
            None if asked.is_some() => Decided::NotAsked,
            _ => {
                let mut page = w.record.page(Vec::<()>::new(), 0);
                $chain($c, &mut page)$(.$await)??;
                let row = DownloadDecisionRow::from(
                    ::recruit_ports::rows::DownloadDecisionRow::new(&w.decision),
                );
                let inserted = diesel::insert_into(privacy_download_decisions::table)
                    .values(&row)
                    .execute($c)$(.$await)?;
                inserted?;
                insert_rows!($c, api_audit_log::table, AuditRow, [page.api]);
                insert_rows!($c, tool_audit_log::table, ToolAuditRow, page.tool);
                Decided::Written
            }
        })
    }};
}

/// The body of `Ledgers::set_review_rules` for `$w` (a `&RulesWrite`), in the caller's
/// transaction on `$c`: `$org` the organization's key and `$rules` its rules as the column
/// keeps them, `$chain` linking the record's rows. Needs the adapter's schema, rows and
/// `insert_rows!` in scope. Evaluates to `Ok(())` or the first error, converted with `?`.
#[macro_export]
macro_rules! set_review_rules {
    ($c:ident, $w:expr, $org:expr, $rules:expr, $chain:path $(, .$await:tt)?) => {{
        let w: &::recruit_ports::review::RulesWrite = $w;
        let updated = diesel::update(organizations::table.filter(organizations::id.eq($org)))
            .set(organizations::review_rules.eq($rules))
            .execute($c)$(.$await)?;
        if updated? == 0 {
            return Err(::recruit_ports::StoreError::NotFound.into());
        }
        let mut page = w.record.page(Vec::<()>::new(), 0);
        $chain($c, &mut page)$(.$await)??;
        insert_rows!($c, api_audit_log::table, AuditRow, [page.api]);
        insert_rows!($c, tool_audit_log::table, ToolAuditRow, page.tool);
        Ok(())
    }};
}

/// The body of `Ledgers::sign_off` for `$w` (a `&SignOffWrite`), in the caller's transaction
/// on `$c`, `$chain` linking the record's rows. Needs the adapter's schema, rows and
/// `insert_rows!` in scope. Evaluates to the outcome or the first error, converted with `?`.
#[macro_export]
macro_rules! sign_off {
    ($c:ident, $w:expr, $chain:path $(, .$await:tt)?) => {{
        use ::recruit_ports::review::SignedOff;
        let w: &::recruit_ports::review::SignOffWrite = $w;
        let row = SignOffRow::from(::recruit_ports::rows::SignOffRow::new(&w.sign_off));
        let inserted = diesel::insert_into(privacy_review_sign_offs::table)
            .values(&row)
            .on_conflict_do_nothing()
            .execute($c)$(.$await)?;
        if inserted? == 0 {
            let stored = privacy_review_sign_offs::table
                .find((row.organization_id.clone(), &row.month))
                .select(SignOffRow::as_select())
                .first($c)$(.$await)?;
            let stored: SignOffRow = stored?;
            Ok(SignedOff::Existing(stored.into_neutral()?.into_sign_off()))
        } else {
            let mut page = w.record.page(Vec::<()>::new(), 0);
            $chain($c, &mut page)$(.$await)??;
            insert_rows!($c, api_audit_log::table, AuditRow, [page.api]);
            insert_rows!($c, tool_audit_log::table, ToolAuditRow, page.tool);
            Ok(SignedOff::Written)
        }
    }};
}
