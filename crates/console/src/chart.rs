//! The overview's charts, drawn here as SVG shapes and table cells: the accesses per day
//! stacked by activity category, and the accesses per weekday and hour. They print as they
//! show, need no script, and test as text.

use recruit_service::review::Review;

use crate::lang::Lang;

/// The drawing's size, in its own units.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 200.0;
/// Room below the bars for the days' numbers.
const AXIS: f64 = 18.0;

/// How many colours the categories take turns with (`cat-0` … in the stylesheet).
const COLOURS: usize = 8;

/// A part of a day's bar: one category's accesses.
pub(crate) struct Segment {
    pub(crate) x: String,
    pub(crate) y: String,
    pub(crate) width: String,
    pub(crate) height: String,
    pub(crate) colour: usize,
    /// What it shows, for people (the shape's `<title>`).
    pub(crate) label: String,
}

/// A day's number under its bar.
pub(crate) struct Tick {
    pub(crate) x: String,
    pub(crate) label: String,
}

/// The accesses per day, stacked by activity category.
pub(crate) struct Daily {
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) segments: Vec<Segment>,
    pub(crate) ticks: Vec<Tick>,
    /// The categories in the order of their colours.
    pub(crate) legend: Vec<(usize, String)>,
    /// A sentence saying what the chart shows, for screen readers.
    pub(crate) summary: String,
}

impl Daily {
    pub(crate) fn of(lang: Lang, review: &Review) -> Self {
        let mut categories: Vec<&String> =
            review.days.iter().flat_map(|d| d.categories.keys()).collect();
        categories.sort();
        categories.dedup();
        let colour = |c: &String| categories.iter().position(|k| *k == c).unwrap_or(0) % COLOURS;
        let peak = review.days.iter().map(|d| d.accesses).max().unwrap_or(0);
        let days = review.days.len().max(1) as f64;
        let step = WIDTH / days;
        let scale = if peak == 0 { 0.0 } else { (HEIGHT - AXIS) / peak as f64 };
        let mut segments = vec![];
        let mut ticks = vec![];
        for (i, day) in review.days.iter().enumerate() {
            let x = i as f64 * step;
            let mut top = HEIGHT - AXIS;
            for (category, n) in &day.categories {
                let h = *n as f64 * scale;
                top -= h;
                segments.push(Segment {
                    x: format!("{:.1}", x + step * 0.1),
                    y: format!("{top:.1}"),
                    width: format!("{:.1}", step * 0.8),
                    height: format!("{h:.1}"),
                    colour: colour(category),
                    label: format!("{}: {} {category}", day.date, lang.number(*n)),
                });
            }
            ticks.push(Tick {
                x: format!("{:.1}", x + step / 2.0),
                label: day.date.get(8..).unwrap_or("").trim_start_matches('0').to_owned(),
            });
        }
        let legend = categories.iter().map(|c| (colour(c), (*c).clone())).collect();
        let summary = lang.ta(
            "chart-summary",
            &[("month", lang.month(review.month).into()), ("peak", peak.into())],
        );
        Self { width: WIDTH, height: HEIGHT, segments, ticks, legend, summary }
    }
}

/// The accesses per weekday and local hour, as shaded table cells.
pub(crate) struct Strip {
    /// Seven rows, Monday first: the weekday's name and its 24 hours' (count, shade 0–5).
    pub(crate) rows: Vec<(String, Vec<(u64, usize)>)>,
}

impl Strip {
    pub(crate) fn of(lang: Lang, review: &Review) -> Self {
        let peak = review.weekday_hours.iter().flatten().copied().max().unwrap_or(0);
        let shade = |n: u64| match (n, peak) {
            (0, _) | (_, 0) => 0,
            (n, peak) => 1 + usize::try_from(n * 4 / peak).unwrap_or(4).min(4),
        };
        let rows = (1..=7)
            .zip(&review.weekday_hours)
            .map(|(day, hours)| {
                let name = lang.t(&format!("weekday-{day}"));
                (name, hours.iter().map(|n| (*n, shade(*n))).collect())
            })
            .collect();
        Self { rows }
    }

    /// The hours' headings.
    pub(crate) fn hours(&self) -> Vec<String> {
        (0..24).map(|h| format!("{h:02}")).collect()
    }
}
