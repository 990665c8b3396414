//! A month's review for both stores, written once over [`Db`]: the grouping statements as
//! SQL text with the few spellings a backend has of its own ([`Dialect`]); [`counts`] and
//! [`lists`], the two halves of the facts, which a store may read on two connections sharing
//! a snapshot, and [`facts`], which reads both on one; and the review's writes, [`decide`],
//! [`set_rules`] and [`sign_off`].

use diesel::QueryableByName;
use recruit_ports::StoreError;
use recruit_ports::review::{
    Author, Decided, DecisionWrite, ReviewFacts, ReviewQuery, RulesWrite, SignOffWrite, SignedOff,
    SlotCount,
};
use recruit_ports::rows as neutral;

use crate::Row;
use crate::db::Db;
use crate::filter::Value;
use crate::statement::Statement;

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
    /// The SQL around parameters each holding the same address, true when a row of
    /// `privacy_audit_logs` recorded that address: a parameter between each two of these.
    pub has_address: &'static [&'static str],
    /// The SQL around a parameter holding JSON text, for a JSON column.
    pub json_param: (&'static str, &'static str),
    /// What ends a `SELECT` whose rows the transaction writes after, so that writers of them
    /// take turns (PostgreSQL's `FOR UPDATE`; SQLite's write transaction holds the store).
    pub lock: &'static str,
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
    /// A query of the database server's clock, in microseconds since the epoch as `count`,
    /// where it keeps one apart from this process (PostgreSQL's `clock_timestamp()`).
    pub clock: Option<&'static str>,
    /// The SQL around a parameter holding the gaps between spans of time
    /// ([`crate::filter::Value::Gaps`]), true when `access_time` lies in one of the spans.
    /// PostgreSQL's: not in the gaps as one `tstzmultirange`, made once for the statement (a
    /// search among the spans for each row, where hundreds of `OR`ed ranges are each tried).
    /// Written as a negation because the planner cannot tell how many rows a multirange holds
    /// and assumes very few: it would read every row of the window and sort them, where a page
    /// is found by reading the page index in order until enough rows pass. None: the `OR`s.
    pub spans: Option<(&'static str, &'static str)>,
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
        // Containment of the address's first 256 characters, which the addresses' GIN index
        // answers (`= ANY` is not indexable; GIN refuses keys of over 2 712 bytes, and an
        // address is any text), then the whole address among the row's.
        has_address: &[
            "CAST(ip_addresses AS varchar(256)[]) @> ARRAY[CAST(",
            " AS varchar(256))] AND ",
            " = ANY(ip_addresses)",
        ],
        json_param: ("CAST(", " AS jsonb)"),
        lock: " FOR UPDATE",
        in_ids: (" = ANY(", ")"),
        id_bytes: ("uuid_send(", ")"),
        kept: true,
        clock: Some(
            "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT) AS count",
        ),
        spans: Some(("NOT (access_time <@ (SELECT CAST(", " AS tstzmultirange)))")),
    };

    /// SQLite's: `access_time` stored as microseconds; the addresses of a JSON array.
    pub const SQLITE: Self = Self {
        param: |n| format!("?{n}"),
        micros: "access_time",
        addresses: "json_each(privacy_audit_logs.ip_addresses) AS a",
        address: "a.value",
        bulk_sum: "CAST(min(total(bulk_count), 9223372036854775807.0) AS INTEGER)",
        has_address: &[
            "EXISTS (SELECT 1 FROM json_each(privacy_audit_logs.ip_addresses) WHERE value = ",
            ")",
        ],
        json_param: ("", ""),
        lock: "",
        in_ids: (" IN (SELECT unhex(value) FROM json_each(", "))"),
        id_bytes: ("", ""),
        kept: false,
        clock: None,
        spans: None,
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
            "SELECT {account}, slot / ({w} / {KEPT_SLOT_MICROS}) AS slot, activity_category, \
             subject_type, entries, bulk_records, first_position \
             FROM privacy_review_slots \
             WHERE organization_id = {org} AND slot >= {from} AND slot < {to}",
            account = account_bytes(d, "account_id"),
            w = p(4),
            org = p(1),
            from = quarter(2),
            to = quarter(3),
        );
    }
    format!(
        "SELECT {account}, CAST({micros} / {w} AS BIGINT) AS slot, activity_category, \
         subject_type, CAST(count(*) AS BIGINT) AS entries, \
         {bulk_sum} AS bulk_records, \
         min(position) AS first_position \
         FROM privacy_audit_logs \
         WHERE organization_id = {org} AND access_time >= {from} AND access_time < {to} \
         GROUP BY account_id, slot, activity_category, subject_type",
        account = account_bytes(d, "account_id"),
        micros = d.micros,
        bulk_sum = d.bulk_sum,
        w = p(4),
        org = p(1),
        from = p(2),
        to = p(3),
    )
}

/// The account of a row, `column`, as its 16 bytes named `account_id`: the rows of the review's
/// groupings are one type in both stores.
fn account_bytes(d: Dialect, column: &str) -> String {
    let (before, after) = d.id_bytes;
    format!("{before}{column}{after} AS account_id")
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
            "SELECT {account}, CAST(count(DISTINCT subject_id) AS BIGINT) AS subjects \
             FROM privacy_review_subjects \
             WHERE organization_id = {org} AND {months} AND last_at >= {from} AND first_at < {to} \
             GROUP BY account_id",
            account = account_bytes(d, "account_id"),
            org = p(1),
            months = kept_months("month", p, 2, 3),
            from = p(2),
            to = p(3),
        );
    }
    format!(
        "SELECT {account}, CAST(count(*) AS BIGINT) AS subjects \
         FROM (SELECT DISTINCT account_id, coalesce(subject_user_id, subject_candidate_id) AS s \
               FROM privacy_audit_logs \
               WHERE organization_id = {} AND access_time >= {} AND access_time < {}) d \
         WHERE s IS NOT NULL \
         GROUP BY account_id",
        p(1),
        p(2),
        p(3),
        account = account_bytes(d, "account_id"),
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
            "SELECT {account}, address FROM privacy_review_addresses m \
             WHERE organization_id = {org} AND {months} AND last_at >= {from} AND first_at < {to} \
             AND NOT EXISTS (SELECT 1 FROM privacy_review_addresses b \
                 WHERE b.organization_id = {org} AND {before} AND b.account_id = m.account_id \
                 AND b.address_key = m.address_key AND b.last_at >= {previous} \
                 AND b.first_at < {from} \
                 AND {previous} < {from})",
            account = account_bytes(d, "m.account_id"),
            org = p(1),
            months = kept_months("month", p, 2, 3),
            before = kept_months("b.month", p, 4, 2),
            from = p(2),
            to = p(3),
            previous = p(4),
        );
    }
    format!(
        "SELECT {account}, {address} AS address \
         FROM privacy_audit_logs, {addresses} \
         WHERE organization_id = {org} AND access_time >= {previous} AND access_time < {to} \
         GROUP BY account_id, {address} \
         HAVING max(CASE WHEN access_time >= {from} THEN 1 ELSE 0 END) = 1 \
         AND max(CASE WHEN access_time < {from} THEN 1 ELSE 0 END) = 0",
        account = account_bytes(d, "account_id"),
        addresses = d.addresses,
        address = d.address,
        org = p(1),
        from = p(2),
        to = p(3),
        previous = p(4),
    )
}

/// A row of the slots' statement.
#[derive(Debug, diesel::QueryableByName)]
pub struct SlotRow {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    account_id: Vec<u8>,
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
#[derive(Debug, diesel::QueryableByName)]
pub struct SubjectRow {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    account_id: Vec<u8>,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    subjects: i64,
}

/// A row of the new addresses' statement.
#[derive(Debug, diesel::QueryableByName)]
pub struct AddressRow {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    account_id: Vec<u8>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    address: String,
}

/// An account's id from its 16 bytes.
fn account(bytes: &[u8]) -> Result<recruit_domain::Uuid, StoreError> {
    recruit_domain::Uuid::from_slice(bytes)
        .map_err(|e| StoreError::other(format!("an account's id in the review: {e}")))
}

/// A statement of `sql` whose parameters are, in order, the organization, the month's first
/// instant, the next month's, and then `more`.
fn of_month<'a>(sql: String, q: &ReviewQuery, more: &[Value<'a>]) -> Statement<'a> {
    let mut values =
        vec![Value::Uuid(q.organization.uuid()), Value::Time(q.from), Value::Time(q.to)];
    values.extend(more.iter().cloned());
    Statement { sql, values }
}

/// Reads the counted half of the facts of `q`: the slots, the subjects and the first
/// position, the other fields left empty. The counted and the listed halves ([`lists`]) read
/// from one snapshot make the facts, [`merge`]d.
pub async fn counts<D: Db>(c: &mut D, q: &ReviewQuery) -> Result<ReviewFacts, StoreError>
where
    SlotRow: QueryableByName<D::Backend>,
    SubjectRow: QueryableByName<D::Backend>,
{
    let d = D::DIALECT;
    let kept = kept_serve(d, q);
    let slots: Vec<SlotRow> =
        c.load(of_month(slots_sql(d, kept), q, &[Value::Int(q.slot_micros)])).await?;
    let subjects: Vec<SubjectRow> = c.load(of_month(subjects_sql(d, kept), q, &[])).await?;
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    let first_position = slots.iter().filter_map(|r| r.first_position).min();
    Ok(ReviewFacts {
        slots: slots
            .into_iter()
            .map(|r| {
                Ok(SlotCount::new(
                    account(&r.account_id)?,
                    r.slot,
                    r.activity_category,
                    &r.subject_type,
                    count(r.entries),
                    count(r.bulk_records),
                ))
            })
            .collect::<Result<_, StoreError>>()?,
        subjects: subjects
            .into_iter()
            .map(|r| Ok((account(&r.account_id)?, count(r.subjects))))
            .collect::<Result<_, StoreError>>()?,
        first_position,
        ..ReviewFacts::default()
    })
}

/// Reads the listed half of the facts of `q`: the new addresses, the downloads, the ledger
/// exports, the decisions and the sign-off, the other fields left empty.
pub async fn lists<D: Db>(c: &mut D, q: &ReviewQuery) -> Result<ReviewFacts, StoreError>
where
    AddressRow: QueryableByName<D::Backend>,
{
    let d = D::DIALECT;
    let kept = kept_serve(d, q);
    let previous = [Value::Time(q.previous_from)];
    let addresses: Vec<AddressRow> =
        c.load(of_month(new_addresses_sql(d, kept), q, &previous)).await?;
    let (p, of) = (d.param, |table: &str, time: &str, column: &str| {
        format!(
            "SELECT * FROM {table} WHERE organization_id = {} AND {time} >= {} AND {time} < {} \
             AND {column} = {} ORDER BY {time}, id",
            (d.param)(1),
            (d.param)(2),
            (d.param)(3),
            (d.param)(4)
        )
    });
    let sql = of("privacy_audit_logs", "access_time", "activity_category");
    let downloads: Vec<D::LedgerRow> = c.load(of_month(sql, q, &[Value::Text(q.download)])).await?;
    let sql = of("api_audit_log", "at", "operation");
    let exports: Vec<D::AuditRow> =
        c.load(of_month(sql, q, &[Value::Text(q.ledger_export)])).await?;
    let by_month = |table: &str, order: &str| Statement {
        sql: format!(
            "SELECT * FROM {table} WHERE organization_id = {} AND month = {}{order}",
            p(1),
            p(2)
        ),
        values: vec![Value::Uuid(q.organization.uuid()), Value::Text(&q.month)],
    };
    let decisions: Vec<D::DownloadDecisionRow> =
        c.load(by_month("privacy_download_decisions", " ORDER BY decided_at, id")).await?;
    let sign_off: Vec<D::SignOffRow> = c.load(by_month("privacy_review_sign_offs", "")).await?;
    Ok(ReviewFacts {
        new_addresses: addresses
            .into_iter()
            .map(|r| Ok((account(&r.account_id)?, r.address)))
            .collect::<Result<_, StoreError>>()?,
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
            .collect::<Result<_, StoreError>>()?,
        sign_off: sign_off
            .into_iter()
            .next()
            .map(|r| r.into_neutral())
            .transpose()?
            .map(|r| r.into_sign_off()),
        ..ReviewFacts::default()
    })
}

/// The facts of a review from its counted half ([`counts`]) and its listed half ([`lists`]),
/// both read from one snapshot.
pub fn merge(counts: ReviewFacts, lists: ReviewFacts) -> ReviewFacts {
    ReviewFacts {
        new_addresses: lists.new_addresses,
        downloads: lists.downloads,
        ledger_exports: lists.ledger_exports,
        decisions: lists.decisions,
        sign_off: lists.sign_off,
        ..counts
    }
}

/// The facts of `q`, read one statement after the other on `c` inside the caller's
/// snapshot: [`counts`], then [`lists`].
pub async fn facts<D: Db>(c: &mut D, q: &ReviewQuery) -> Result<ReviewFacts, StoreError>
where
    SlotRow: QueryableByName<D::Backend>,
    SubjectRow: QueryableByName<D::Backend>,
    AddressRow: QueryableByName<D::Backend>,
{
    let counts = counts(c, q).await?;
    Ok(merge(counts, lists(c, q).await?))
}

/// A download's entry and its account, as their 16 bytes.
#[derive(Debug, diesel::QueryableByName)]
pub struct DownloadRow {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    id: Vec<u8>,
    #[diesel(sql_type = diesel::sql_types::Binary)]
    account_id: Vec<u8>,
}

/// `Ledgers::decide_download` for `w`, in the caller's transaction on `c`: the download of
/// the month (locked, so that decisions on one entry are taken one after the other), the
/// author's right to it (a reviewer's own download is refused, an explanation is the
/// downloader's and answers an open request), the latest decision (the same one again
/// changes nothing), then the decision and its record.
pub async fn decide<D: Db>(c: &mut D, w: &DecisionWrite) -> Result<Decided, StoreError>
where
    DownloadRow: QueryableByName<D::Backend>,
{
    let d = D::DIALECT;
    let p = d.param;
    let (org, entry) = (w.decision.organization_id.uuid(), w.decision.entry_id.uuid());
    let (before, after) = d.id_bytes;
    let download = Statement {
        sql: format!(
            "SELECT {before}id{after} AS id, {before}account_id{after} AS account_id \
             FROM privacy_audit_logs WHERE organization_id = {} AND id = {} \
             AND activity_category = {} AND access_time >= {} AND access_time < {}{}",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            d.lock
        ),
        values: vec![
            Value::Uuid(org),
            Value::Uuid(entry),
            Value::Text(w.download),
            Value::Time(w.from),
            Value::Time(w.to),
        ],
    };
    let download: Vec<DownloadRow> = c.load(download).await?;
    let decider = w.decision.user_id.uuid();
    match download.first() {
        Some(row) if row.id == entry.as_bytes() => match w.author {
            Author::Reviewer if row.account_id == decider.as_bytes() => {
                return Ok(Decided::OwnDownload);
            }
            Author::Downloader { .. } if row.account_id != decider.as_bytes() => {
                return Ok(Decided::NotAsked);
            }
            _ => {}
        },
        _ => return Err(StoreError::NotFound),
    }
    let latest = Statement {
        sql: format!(
            "SELECT * FROM privacy_download_decisions WHERE organization_id = {} \
             AND entry_id = {} ORDER BY decided_at DESC, id DESC LIMIT 1",
            p(1),
            p(2)
        ),
        values: vec![Value::Uuid(org), Value::Uuid(entry)],
    };
    let latest: Vec<D::DownloadDecisionRow> = c.load(latest).await?;
    let latest = latest.into_iter().next().map(Row::into_neutral).transpose()?;
    let latest = latest.map(|r| r.into_decision());
    let asked = match w.author {
        Author::Downloader { asked } => Some(asked),
        Author::Reviewer => None,
    };
    Ok(match latest {
        Some(d) if d.status == w.decision.status && d.reason == w.decision.reason => {
            Decided::Unchanged(d)
        }
        Some(d) if asked.is_some_and(|asked| d.status != asked) => Decided::NotAsked,
        None if asked.is_some() => Decided::NotAsked,
        _ => {
            c.append_record(w.record.page(Vec::<()>::new(), 0)).await?;
            c.insert_decision(neutral::DownloadDecisionRow::new(&w.decision)).await?;
            Decided::Written
        }
    })
}

/// `Ledgers::set_review_rules` for `w`, in the caller's transaction on `c`: the rules as the
/// column keeps them (JSON), and the change's record. An organization not stored is
/// `NotFound`.
pub async fn set_rules<D: Db>(c: &mut D, w: &RulesWrite) -> Result<(), StoreError> {
    let d = D::DIALECT;
    let rules = serde_json::to_string(&w.rules).map_err(|e| StoreError::Other(Box::new(e)))?;
    let (before, after) = d.json_param;
    let update = Statement {
        sql: format!(
            "UPDATE organizations SET review_rules = {before}{}{after} WHERE id = {}",
            (d.param)(1),
            (d.param)(2)
        ),
        values: vec![Value::Text(&rules), Value::Uuid(w.organization.uuid())],
    };
    if c.execute(update).await? == 0 {
        return Err(StoreError::NotFound);
    }
    c.append_record(w.record.page(Vec::<()>::new(), 0)).await
}

/// `Ledgers::sign_off` for `w`, in the caller's transaction on `c`: the sign-off and its
/// record, or the one stored for the month already.
pub async fn sign_off<D: Db>(c: &mut D, w: &SignOffWrite) -> Result<SignedOff, StoreError> {
    let row = neutral::SignOffRow::new(&w.sign_off);
    let (org, month) = (row.organization_id, row.month.clone());
    if c.insert_sign_off(row).await? {
        c.append_record(w.record.page(Vec::<()>::new(), 0)).await?;
        return Ok(SignedOff::Written);
    }
    let p = D::DIALECT.param;
    let stored = Statement {
        sql: format!(
            "SELECT * FROM privacy_review_sign_offs WHERE organization_id = {} AND month = {}",
            p(1),
            p(2)
        ),
        values: vec![Value::Uuid(org), Value::Text(&month)],
    };
    let stored: Vec<D::SignOffRow> = c.load(stored).await?;
    let stored = stored.into_iter().next().ok_or(StoreError::NotFound)?;
    Ok(SignedOff::Existing(stored.into_neutral()?.into_sign_off()))
}
