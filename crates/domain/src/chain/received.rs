//! A receiver's check of what a log stream delivered: the lines it stored (in any order, with
//! duplicates, as at-least-once delivery leaves them), sorted into their chains and checked
//! against them and a signed checkpoint. It says what is missing (by position), what arrived
//! more than once, and what does not prove itself (an entry altered, a link broken, two
//! different lines at one position, a chain that is not the one the checkpoint signs).

use std::collections::BTreeMap;

use super::{
    Checkpoint, Digest, ExportLine, GENESIS, Ledger, canonical_json, entry_hash, parse_hex,
};
use crate::OrganizationId;

/// What is wrong at a position of a chain a receiver holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Problem {
    /// The positions from `first` to `last` were never received.
    Missing {
        /// The first position missing.
        first: u64,
        /// The last.
        last: u64,
    },
    /// The line's hash is not the hash of its contents.
    Altered {
        /// Where.
        position: u64,
    },
    /// The line does not link to the one received at the position before it.
    Unlinked {
        /// Where.
        position: u64,
    },
    /// Two different lines were received at this position.
    Conflicting {
        /// Where.
        position: u64,
    },
    /// The line at the checkpoint's position is not the one it signs.
    NotCheckpointed {
        /// Where.
        position: u64,
    },
    /// A line without a position or hashes: not a line of a chain.
    Unchained {
        /// Which line of the input (1 for the first).
        line: usize,
    },
}

/// One chain as a receiver holds it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReceivedChain {
    /// The organization.
    pub organization_id: OrganizationId,
    /// The ledger.
    pub ledger: Ledger,
    /// Lines of this chain read.
    pub lines: u64,
    /// Distinct positions received.
    pub entries: u64,
    /// Lines that repeat one received already, exactly (at-least-once delivery's duplicates).
    pub duplicates: u64,
    /// The lowest and highest positions received.
    pub first: u64,
    /// The highest position received.
    pub last: u64,
    /// The position up to which the checkpoint given vouches, when one of this chain was.
    pub checkpoint: Option<u64>,
    /// What is wrong, in the order of positions.
    pub problems: Vec<Problem>,
}

impl ReceivedChain {
    /// Whether the chain holds every position from its first up to its last (and the
    /// checkpoint's), each proving itself.
    pub fn is_complete(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Sorts `lines` (each with its number in the input) into their chains and checks each from
/// the lowest position received (`from`, when given for an organization's chain, is where the
/// stream started: positions after it and before the lowest received are missing too), up to
/// the highest received or the position of `checkpoints`' checkpoint of that chain, whichever
/// is higher. Checkpoints are taken as given: check their signatures first.
pub fn check_received(
    lines: impl IntoIterator<Item = (usize, ExportLine)>,
    checkpoints: &[Checkpoint],
    from: Option<u64>,
) -> (Vec<ReceivedChain>, Vec<Problem>) {
    let mut chains: BTreeMap<(OrganizationId, Ledger), Held> = BTreeMap::new();
    let mut unchained = vec![];
    for (number, line) in lines {
        let (Some(position), Some(_), Some(_)) = (line.position, &line.prev_hash, &line.hash)
        else {
            unchained.push(Problem::Unchained { line: number });
            continue;
        };
        let held = chains.entry((line.organization_id, line.ledger)).or_default();
        held.lines += 1;
        match held.at.get(&position) {
            Some(seen) if *seen == line => held.duplicates += 1,
            Some(_) => {
                held.conflicting.push(position);
            }
            None => {
                held.at.insert(position, line);
            }
        }
    }
    let checked = chains
        .into_iter()
        .map(|((organization_id, ledger), held)| {
            let checkpoint = checkpoints
                .iter()
                .filter(|c| c.organization_id == organization_id && c.ledger == ledger)
                .max_by_key(|c| c.position);
            held.check(organization_id, ledger, checkpoint, from)
        })
        .collect();
    (checked, unchained)
}

/// A chain's lines as read.
#[derive(Default)]
struct Held {
    at: BTreeMap<u64, ExportLine>,
    lines: u64,
    duplicates: u64,
    conflicting: Vec<u64>,
}

impl Held {
    fn check(
        self,
        organization_id: OrganizationId,
        ledger: Ledger,
        checkpoint: Option<&Checkpoint>,
        from: Option<u64>,
    ) -> ReceivedChain {
        let first = self.at.keys().next().copied().unwrap_or_default();
        let last = self.at.keys().next_back().copied().unwrap_or_default();
        let start = from.map_or(first, |f| f + 1).min(first);
        let end = checkpoint.map_or(last, |c| c.position.max(last));
        let mut problems = vec![];
        let mut expected = start;
        let mut before: Option<(u64, Digest)> = None;
        for (&position, line) in &self.at {
            if position < start {
                continue;
            }
            if position > expected {
                problems.push(Problem::Missing { first: expected, last: position - 1 });
            }
            let prev = line.prev_hash.as_deref().and_then(parse_hex);
            let hash = line.hash.as_deref().and_then(parse_hex);
            let computed = canonical_json(&line.entry).ok().zip(prev).map(|(canonical, prev)| {
                entry_hash(ledger, organization_id, position, &prev, &canonical)
            });
            if computed.is_none() || computed != hash {
                problems.push(Problem::Altered { position });
            }
            let linked = match before {
                Some((p, h)) if p + 1 == position => prev == Some(h),
                None if position == 1 => prev == Some(GENESIS),
                _ => true,
            };
            if !linked {
                problems.push(Problem::Unlinked { position });
            }
            if self.conflicting.contains(&position) {
                problems.push(Problem::Conflicting { position });
            }
            if let Some(c) = checkpoint
                && c.position == position
                && line.hash.as_deref() != Some(c.head_hash.as_str())
            {
                problems.push(Problem::NotCheckpointed { position });
            }
            before = hash.map(|h| (position, h));
            expected = position + 1;
        }
        if end >= expected && end > 0 {
            problems.push(Problem::Missing { first: expected, last: end });
        }
        ReceivedChain {
            organization_id,
            ledger,
            lines: self.lines,
            entries: self.at.len() as u64,
            duplicates: self.duplicates,
            first,
            last,
            checkpoint: checkpoint.map(|c| c.position),
            problems,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::line::tests::chain;

    fn checkpoint(org: OrganizationId, line: &ExportLine) -> Checkpoint {
        Checkpoint {
            organization_id: org,
            ledger: Ledger::Privacy,
            position: line.position.unwrap(),
            head_hash: line.hash.clone().unwrap(),
            signed_at: crate::Timestamp::MIN,
            key_id: String::new(),
            algorithm: String::new(),
            signature: String::new(),
        }
    }

    fn numbered(lines: Vec<ExportLine>) -> Vec<(usize, ExportLine)> {
        lines.into_iter().enumerate().map(|(i, l)| (i + 1, l)).collect()
    }

    #[test]
    fn lines_in_any_order_with_duplicates_are_a_complete_chain() {
        let (org, lines) = chain(6);
        let mut shuffled = lines.clone();
        shuffled.reverse();
        shuffled.extend(lines[2..4].iter().cloned());
        let (chains, unchained) =
            check_received(numbered(shuffled), &[checkpoint(org, &lines[5])], None);
        assert!(unchained.is_empty());
        let c = &chains[0];
        assert!(c.is_complete(), "{c:?}");
        assert_eq!((c.lines, c.entries, c.duplicates, c.first, c.last), (8, 6, 2, 1, 6));
        assert_eq!(c.checkpoint, Some(6));
    }

    #[test]
    fn a_gap_a_missing_tail_an_alteration_and_a_conflict_are_each_named() {
        let (org, lines) = chain(8);
        let mut held: Vec<ExportLine> =
            lines.iter().filter(|l| ![3, 4, 8].contains(&l.position.unwrap())).cloned().collect();
        let mut altered = lines[5].clone();
        altered.entry["n"] = 60.into();
        held.push(altered);
        let (chains, _) = check_received(numbered(held), &[checkpoint(org, &lines[7])], None);
        assert_eq!(
            chains[0].problems,
            [
                Problem::Missing { first: 3, last: 4 },
                Problem::Conflicting { position: 6 },
                Problem::Missing { first: 8, last: 8 },
            ],
            "5 links to the missing 4: a link is checked only when both ends are held"
        );
    }

    #[test]
    fn an_altered_first_line_and_a_rewritten_chain_show() {
        let (org, lines) = chain(3);
        let mut altered = lines.clone();
        altered[1].entry["n"] = 20.into();
        let (chains, _) = check_received(numbered(altered), &[], None);
        assert_eq!(chains[0].problems, [Problem::Altered { position: 2 }]);
        let mut signed = checkpoint(org, &lines[2]);
        signed.head_hash = lines[0].hash.clone().unwrap();
        let (chains, _) = check_received(numbered(lines.clone()), &[signed], None);
        assert_eq!(chains[0].problems, [Problem::NotCheckpointed { position: 3 }]);
        // A stream started after position 1: what it never delivered before its first line.
        let (chains, _) = check_received(numbered(lines[1..].to_vec()), &[], Some(0));
        assert_eq!(chains[0].problems, [Problem::Missing { first: 1, last: 1 }]);
        let (chains, _) = check_received(numbered(lines[1..].to_vec()), &[], None);
        assert!(chains[0].is_complete(), "from the first line received");
        let mut loose = lines[0].clone();
        loose.position = None;
        let (_, unchained) = check_received(numbered(vec![loose]), &[], None);
        assert_eq!(unchained, [Problem::Unchained { line: 1 }]);
    }
}
