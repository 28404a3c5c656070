//! The latency distribution of every run in one SVG: a percentile plot with a "nines" x axis
//! (0, 90, 99, 99.9, 99.99) and a logarithmic latency axis, one coloured line per run.

use std::fmt::Write;

use hdrhistogram::Histogram;

/// One line of the plot.
pub struct Series<'a> {
    /// Legend text.
    pub label: String,
    /// Latencies in microseconds.
    pub latency_us: &'a Histogram<u64>,
}

const WIDTH: f64 = 900.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 28.0;
const TOP: f64 = 70.0;
/// Height of the plotting area.
const PLOT_H: f64 = 420.0;
/// Where the plotting area ends.
const PLOT_BOTTOM: f64 = TOP + PLOT_H;
/// Where the legend, under the x axis, starts.
const LEGEND_TOP: f64 = PLOT_BOTTOM + 62.0;
const LEGEND_ROW_H: f64 = 40.0;
const LEGEND_COLUMNS: usize = 2;
/// The x axis ends at 99.99%: four nines.
const MAX_NINES: f64 = 4.0;
const COLOURS: &[&str] = &[
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const X_TICKS: &[(f64, &str)] = &[
    (0.0, "0"),
    (std::f64::consts::LOG10_2, "50"),
    (1.0, "90"),
    (2.0, "99"),
    (3.0, "99.9"),
    (4.0, "99.99"),
];

/// Percentile (as a quantile, 0..1) at `nines` on the x axis: 0 → 0, 1 → 0.9, 2 → 0.99, ...
pub fn quantile_at(nines: f64) -> f64 {
    1.0 - 10f64.powf(-nines)
}

/// Position on the x axis of quantile `q`.
pub fn nines_of(q: f64) -> f64 {
    -(1.0 - q).max(1e-12).log10()
}

/// Escapes text for an XML text node or attribute.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A millisecond figure the way people write it: 0.5, 2, 50, 1000.
fn ms_label(ms: f64) -> String {
    if ms >= 1.0 {
        format!("{}", ms.round() as u64)
    } else {
        let s = format!("{ms:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A latency figure for the legend: one decimal below 10 ms, whole milliseconds above.
fn figure(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{}", ms.round() as u64)
    }
}

/// The 1-2-5 step at or below (`down`) or at or above `ms`, as log10 of milliseconds.
fn snap_125(ms: f64, down: bool) -> f64 {
    let decade = ms.log10().floor();
    let base = 10f64.powf(decade);
    let steps = [1.0, 2.0, 5.0, 10.0];
    let pick = if down {
        steps
            .iter()
            .rev()
            .find(|&&m| base * m <= ms * (1.0 + 1e-9))
            .copied()
            .unwrap_or(1.0)
    } else {
        steps
            .iter()
            .find(|&&m| base * m >= ms * (1.0 - 1e-9))
            .copied()
            .unwrap_or(10.0)
    };
    (base * pick).log10()
}

/// The y range as log10 of milliseconds: the 1-2-5 steps around the data.
fn y_range(series: &[Series<'_>]) -> (f64, f64) {
    let recorded: Vec<&Histogram<u64>> = series
        .iter()
        .map(|s| s.latency_us)
        .filter(|h| !h.is_empty())
        .collect();
    if recorded.is_empty() {
        return (0.0, 3.0);
    }
    let lo_ms = recorded
        .iter()
        .map(|h| h.min().max(1) as f64 / 1000.0)
        .fold(f64::INFINITY, f64::min);
    let hi_ms = recorded
        .iter()
        .map(|h| h.max().max(1) as f64 / 1000.0)
        .fold(0.0, f64::max);
    let lo = snap_125(lo_ms, true);
    let mut hi = snap_125(hi_ms, false);
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi)
}

struct Frame {
    y_lo: f64,
    y_hi: f64,
}

impl Frame {
    fn x(&self, nines: f64) -> f64 {
        LEFT + nines / MAX_NINES * (WIDTH - LEFT - RIGHT)
    }
    fn y(&self, ms: f64) -> f64 {
        let d = ms.max(1e-3).log10().clamp(self.y_lo, self.y_hi);
        PLOT_BOTTOM - (d - self.y_lo) / (self.y_hi - self.y_lo) * PLOT_H
    }
}

/// The plot as an SVG document. `title` heads it; `subtitle` says what was run.
pub fn render(title: &str, subtitle: &str, series: &[Series<'_>]) -> String {
    let (y_lo, y_hi) = y_range(series);
    let f = Frame { y_lo, y_hi };
    let legend_rows = series.len().div_ceil(LEGEND_COLUMNS);
    let height = LEGEND_TOP + LEGEND_ROW_H * legend_rows as f64 + 8.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="{LEFT}" y="30" font-size="20" font-weight="bold" fill="#222">{}</text>
<text x="{LEFT}" y="52" font-size="13" fill="#555">{}</text>
"##,
        esc(title),
        esc(subtitle)
    );
    grid(&mut s, &f);
    for (i, ser) in series.iter().enumerate() {
        line(&mut s, &f, ser, COLOURS[i % COLOURS.len()]);
    }
    legend(&mut s, series);
    s.push_str("</svg>\n");
    s
}

fn grid(s: &mut String, f: &Frame) {
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, TOP, PLOT_BOTTOM);
    s.push_str("<g class=\"grid\">\n");
    let px_per_decade = (y1 - y0) / (f.y_hi - f.y_lo);
    let first_decade = f.y_lo.floor() as i32;
    let last_decade = f.y_hi.ceil() as i32;
    for k in first_decade..=last_decade {
        let base = 10f64.powi(k);
        for m in [1.0, 2.0, 5.0] {
            let ms = base * m;
            let d = ms.log10();
            if d < f.y_lo - 1e-9 || d > f.y_hi + 1e-9 {
                continue;
            }
            let y = f.y(ms);
            let major = m == 1.0;
            let stroke = if major { "#bbb" } else { "#e4e4e4" };
            let _ = writeln!(
                s,
                r#"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="{stroke}" stroke-width="1"/>"#
            );
            if major || px_per_decade >= 90.0 {
                let colour = if major { "#333" } else { "#777" };
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="end" fill="{colour}">{}</text>"#,
                    x0 - 8.0,
                    y + 4.0,
                    ms_label(ms)
                );
            }
        }
    }
    for &(n, label) in X_TICKS {
        let x = f.x(n);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#bbb" stroke-width="1"/>"##
        );
        let _ = writeln!(
            s,
            r##"<text x="{x:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="#333">{label}</text>"##,
            y1 + 18.0
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{x0}" y="{y0}" width="{:.1}" height="{:.1}" fill="none" stroke="#555" stroke-width="1"/>"##,
        x1 - x0,
        y1 - y0
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" font-size="13" text-anchor="middle" fill="#222">percentile (%)</text>"##,
        (x0 + x1) / 2.0,
        PLOT_BOTTOM + 42.0
    );
    let _ = writeln!(
        s,
        r##"<text transform="translate(24 {:.1}) rotate(-90)" font-size="13" text-anchor="middle" fill="#222">latency (ms, log scale)</text>"##,
        (y0 + y1) / 2.0
    );
    s.push_str("</g>\n");
}

fn line(s: &mut String, f: &Frame, ser: &Series<'_>, colour: &str) {
    let h = ser.latency_us;
    if h.is_empty() {
        return;
    }
    let mut d = String::new();
    const STEPS: u32 = 400;
    for i in 0..=STEPS {
        let nines = MAX_NINES * f64::from(i) / f64::from(STEPS);
        let ms = h.value_at_quantile(quantile_at(nines)) as f64 / 1000.0;
        let cmd = if i == 0 { 'M' } else { 'L' };
        let _ = write!(d, "{cmd}{:.1} {:.1} ", f.x(nines), f.y(ms));
    }
    let _ = writeln!(
        s,
        r#"<path class="series" d="{}" fill="none" stroke="{colour}" stroke-width="2.5" stroke-opacity="0.9" stroke-linejoin="round"><title>{}</title></path>"#,
        d.trim_end(),
        esc(&ser.label)
    );
}

fn legend(s: &mut String, series: &[Series<'_>]) {
    let col_w = (WIDTH - LEFT - RIGHT) / LEGEND_COLUMNS as f64;
    for (i, ser) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let x = LEFT + col_w * (i % LEGEND_COLUMNS) as f64;
        let ry = LEGEND_TOP + LEGEND_ROW_H * (i / LEGEND_COLUMNS) as f64;
        let q = |p: f64| figure(ser.latency_us.value_at_quantile(p) as f64 / 1000.0);
        let figures = if ser.latency_us.is_empty() {
            "no operations recorded".to_string()
        } else {
            format!(
                "p50 {} · p99 {} · p99.9 {} · max {} ms",
                q(0.5),
                q(0.99),
                q(0.999),
                figure(ser.latency_us.max() as f64 / 1000.0)
            )
        };
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="4"/>"#,
            ry - 6.0,
            x + 28.0,
            ry - 6.0
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{ry:.1}" font-size="14" font-weight="bold" fill="#222">{}</text>"##,
            x + 38.0,
            esc(&ser.label)
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="12" fill="#555">{}</text>"##,
            x + 38.0,
            ry + 16.0,
            esc(&figures)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::tally::latency_histogram;

    fn hist(values_ms: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = latency_histogram();
        for &(ms, n) in values_ms {
            h.record_n(ms * 1000, n).unwrap();
        }
        h
    }

    #[test]
    fn y_range_snaps_to_125_steps() {
        let cases = [
            (1.6, true, 1.0),
            (2.0, true, 2.0),
            (4.9, true, 2.0),
            (0.3, true, 0.2),
            (1500.0, false, 2000.0),
            (2000.0, false, 2000.0),
            (72.0, false, 100.0),
            (3.0, false, 5.0),
        ];
        for (ms, down, want) in cases {
            assert!(
                (snap_125(ms, down) - f64::log10(want)).abs() < 1e-9,
                "{ms} {down}"
            );
        }
        assert_eq!(figure(3.44), "3.4");
        assert_eq!(figure(71.6), "72");
    }

    #[test]
    fn nines_axis_maps_percentiles() {
        for (n, q) in [
            (0.0, 0.0),
            (1.0, 0.9),
            (2.0, 0.99),
            (3.0, 0.999),
            (4.0, 0.9999),
        ] {
            assert!((quantile_at(n) - q).abs() < 1e-12, "{n}");
            assert!((nines_of(q) - n).abs() < 1e-9, "{q}");
        }
    }

    #[test]
    fn well_formed_with_one_path_per_run() {
        let off = hist(&[(2, 9_700), (1_200, 300)]);
        let on = hist(&[(2, 9_700), (70, 300)]);
        let empty = latency_histogram();
        let series = [
            Series {
                label: "hedging off".into(),
                latency_us: &off,
            },
            Series {
                label: "hedging 50ms".into(),
                latency_us: &on,
            },
            Series {
                label: "a <weird> & \"label\"".into(),
                latency_us: &empty,
            },
        ];
        let svg = render("Read latency", "read · slow-primary", &series);
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let paths: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("path") && n.attribute("class") == Some("series"))
            .collect();
        // An empty run draws no line but keeps its legend entry.
        assert_eq!(paths.len(), 2);
        let texts: Vec<String> = doc
            .descendants()
            .filter_map(|n| n.text())
            .map(str::to_string)
            .collect();
        for want in [
            "percentile (%)",
            "latency (ms, log scale)",
            "99.9",
            "99.99",
            "hedging off",
            "hedging 50ms",
        ] {
            assert!(texts.iter().any(|t| t == want), "missing text {want:?}");
        }
        assert!(texts.iter().any(|t| t == "a <weird> & \"label\""));
        assert!(
            texts.iter().any(|t| t.contains("p99.9 1200 · max 1200 ms")),
            "{texts:?}"
        );
        // Gridlines cover the data on 1-2-5 steps: 2 ms to 2000 ms.
        assert!(
            texts.iter().any(|t| t == "2") && texts.iter().any(|t| t == "2000"),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t == "1" || t == "5000"), "{texts:?}");
    }

    #[test]
    fn slower_run_is_drawn_higher_at_the_tail() {
        let off = hist(&[(2, 990), (1_000, 10)]);
        let on = hist(&[(2, 990), (60, 10)]);
        let svg = render(
            "t",
            "s",
            &[
                Series {
                    label: "off".into(),
                    latency_us: &off,
                },
                Series {
                    label: "on".into(),
                    latency_us: &on,
                },
            ],
        );
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let last_y = |i: usize| -> f64 {
            let p = doc
                .descendants()
                .filter(|n| n.attribute("class") == Some("series"))
                .nth(i)
                .unwrap();
            let d = p.attribute("d").unwrap();
            d.split_whitespace().last().unwrap().parse().unwrap()
        };
        // SVG y grows downwards: the slower tail has the smaller y.
        assert!(last_y(0) < last_y(1));
    }

    #[test]
    fn empty_input_still_renders_axes() {
        let svg = render("t", "s", &[]);
        assert!(roxmltree::Document::parse(&svg).is_ok());
        assert!(svg.contains("percentile (%)"));
    }
}
