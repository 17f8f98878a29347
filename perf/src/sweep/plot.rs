// The sweep's SVG plots.

use std::error::Error;
use std::path::Path;

use super::tables::size_label;
use super::{Group, Series, Sweep};

/// A log-log SVG of one metric: one line per series that has values.
pub fn plot(s: &Sweep, contains: bool, path: &Path, title: &str) -> Result<(), Box<dyn Error>> {
    use plotters::prelude::*;

    let groups: &[Group] = &[Group::Kernel, Group::Peer, Group::Ceiling];
    let lines: Vec<(&Series, Vec<(f64, f64)>)> = s
        .series
        .iter()
        .filter(|se| groups.contains(&se.group))
        .map(|se| {
            let v = if contains { &se.contains } else { &se.insert };
            let pts: Vec<(f64, f64)> = s
                .sizes
                .iter()
                .zip(v)
                .filter(|(_, y)| y.is_finite() && **y > 0.0)
                .map(|(&x, &y)| (x as f64, y))
                .collect();
            (se, pts)
        })
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let ys = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.1));
    let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    if !lo.is_finite() {
        return Err("nothing to plot".into());
    }
    let (xlo, xhi) = (
        *s.sizes.first().ok_or("no sizes")? as f64,
        *s.sizes.last().ok_or("no sizes")? as f64,
    );
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (xlo / 1.3..xhi * 1.3)
                .log_scale()
                .with_key_points(s.sizes.iter().map(|&b| b as f64).collect()),
            (lo / 1.5..hi * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("filter size (bytes, log scale)")
        .y_desc("ns per key (log scale)")
        .x_label_formatter(&|v| size_label(*v as usize))
        .y_label_formatter(&|v| format!("{v:.1}"))
        .draw()?;
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ];
    let mut next = 0;
    for (se, pts) in lines {
        let (color, width) = match se.group {
            Group::Ceiling => (
                if se.name.contains("THP") {
                    RGBColor(120, 120, 120)
                } else {
                    BLACK
                },
                3,
            ),
            _ => {
                next += 1;
                (palette[(next - 1) % palette.len()], 2)
            }
        };
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: false,
            stroke_width: width,
        };
        chart
            .draw_series(LineSeries::new(pts, style))?
            .label(se.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
