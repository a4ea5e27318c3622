//! The origin evaluation's report for people: a markdown table and an SVG plot of DO
//! and TF against table size.

use super::origin::EvalReport;
use textorigin_server::view::html::escape;

/// The report as a markdown table (one row per configuration and size).
pub fn markdown(r: &EvalReport) -> String {
    let o = &r.oracle;
    let mut s = format!(
        "Oracle: {} documents, {} shingles ({} distinct), shingle copy ratio {:.1}%; {} query documents, {:.1}% their own dominant origin, {:.1}% fresh tokens.\n\n",
        o.docs, o.shingles, o.distinct_shingles, o.shingle_copy_ratio, o.queries, o.self_dominant, o.fresh_token_share
    );
    if let Some(acc) = o.oracle_reply_accuracy {
        s += &format!(
            "Replies with a known parent: {}, {} quoted tokens; the oracle attributes {:.1}% of them to the parent or an ancestor (column `replies`).\n\n",
            o.replies, o.quoted_tokens, acc
        );
    }
    // The arrival column only when a run is not in the corpus's order.
    let arrivals = r.rows.iter().any(|x| x.arrival != "in-order");
    if arrivals {
        s += "| arrival ";
    }
    s += "| selection | eviction | estimation | propagate | align | table | % of shingles | % of distinct | ssr | DO | DO rule | DO blocks | TF | overall | origin right | wrong | unlabelled | replies | hits | evictions | s |\n";
    if arrivals {
        s += "| --- ";
    }
    s += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    let on = |b: bool| if b { "on" } else { "off" };
    for x in &r.rows {
        if arrivals {
            s += &format!("| {} ", x.arrival);
        }
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {:.2}% | {:.2}% | {:.1}% | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {:.1} |\n",
            x.selection,
            x.eviction,
            x.estimation,
            on(x.propagate),
            on(x.align),
            human_bytes(x.table_bytes),
            x.table_pct,
            x.table_pct_distinct,
            x.ssr,
            x.do_,
            x.do_rule,
            x.do_blocks,
            x.tf,
            x.overall,
            x.origin_right,
            x.origin_wrong,
            x.origin_unlabelled,
            x.reply_accuracy.map_or("-".to_string(), |a| format!("{a:.1}")),
            x.hits,
            x.evictions,
            x.seconds
        );
    }
    s
}

fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

/// One series per configuration: (name, [(log size, DO, TF)] by size).
type Series = (String, Vec<(f64, f64, f64)>);

fn series(r: &EvalReport, xs: &[f64]) -> Vec<Series> {
    let mut groups: Vec<Series> = Vec::new();
    for (x, row) in xs.iter().zip(&r.rows) {
        let mut name = format!("{} + {} + {}", row.selection, row.eviction, row.estimation);
        for (on, what) in [(row.propagate, "P"), (row.align, "A")] {
            if on {
                name += &format!(" + {what}");
            }
        }
        if row.arrival != "in-order" {
            name += &format!(" ({})", row.arrival);
        }
        match groups.iter_mut().find(|g| g.0 == name) {
            Some(g) => g.1.push((*x, row.do_, row.tf)),
            None => groups.push((name, vec![(*x, row.do_, row.tf)])),
        }
    }
    for (_, pts) in &mut groups {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    groups
}

/// An SVG plot of DO (solid) and TF (dashed) against table size (log scale), one colour
/// per configuration. Self-contained: no fonts or scripts from outside.
pub fn svg(r: &EvalReport) -> String {
    let (w, h, ml, mr, mt, mb) = (760.0, 440.0, 60.0, 230.0, 30.0, 50.0);
    let xs: Vec<f64> = r.rows.iter().map(|x| x.table_pct.max(1e-4).log10()).collect();
    let (xmin, xmax) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (xmin, xmax) = if xmax - xmin < 1e-9 { (xmin - 0.5, xmax + 0.5) } else { (xmin, xmax) };
    let ys: Vec<f64> = r.rows.iter().flat_map(|x| [x.do_, x.tf]).collect();
    let ymin = (ys.iter().copied().fold(100.0, f64::min) / 10.0).floor() * 10.0;
    let ymin = ymin.min(90.0);
    let px = |x: f64| ml + (x - xmin) / (xmax - xmin) * (w - ml - mr);
    let py = |y: f64| mt + (100.0 - y) / (100.0 - ymin) * (h - mt - mb);
    let colours =
        ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    // Axes and grid.
    let mut y = ymin;
    while y <= 100.0 + 1e-9 {
        s += &format!(
            "<line x1=\"{ml}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{y:.0}%</text>\n",
            w - mr,
            py(y),
            py(y),
            ml - 6.0,
            py(y) + 4.0
        );
        y += 10.0;
    }
    let mut e = xmin.floor();
    while e <= xmax.ceil() {
        if e >= xmin - 1e-9 && e <= xmax + 1e-9 {
            s += &format!(
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{mt}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}%</text>\n",
                px(e),
                px(e),
                h - mb,
                px(e),
                h - mb + 16.0,
                10f64.powf(e)
            );
        }
        e += 1.0;
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">table size (% of the corpus's shingles, log scale)</text>\n<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">DO (solid), TF (dashed)</text>\n",
        (ml + w - mr) / 2.0,
        h - 10.0,
        (mt + h - mb) / 2.0,
        (mt + h - mb) / 2.0
    );
    for (gi, (name, pts)) in series(r, &xs).iter().enumerate() {
        let c = colours[gi % colours.len()];
        let line = |sel: &dyn Fn(&(f64, f64, f64)) -> f64| -> String {
            pts.iter().map(|p| format!("{:.1},{:.1}", px(p.0), py(sel(p)))).collect::<Vec<_>>().join(" ")
        };
        s += &format!("<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>\n", line(&|p| p.1));
        s += &format!(
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" stroke-dasharray=\"6 4\" points=\"{}\"/>\n",
            line(&|p| p.2)
        );
        for p in pts.iter() {
            s += &format!("<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>\n", px(p.0), py(p.1));
        }
        let ly = mt + 10.0 + 18.0 * gi as f64;
        s += &format!(
            "<line x1=\"{}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
            w - mr + 10.0,
            w - mr + 34.0,
            w - mr + 40.0,
            ly + 4.0,
            escape(name)
        );
    }
    s += "</svg>\n";
    s
}
