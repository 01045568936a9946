//! `colorize`: a colour map from a height or a mask through a multi-stop gradient.

use super::palette::{self, Gradient};
use crate::field::Field;
use crate::node::{EvalCtx, Node, NodeError};

crate::choice_enum! {
    /// The gradient: a built-in palette (`palettes.json`) or the `stops` text.
    pub enum PaletteName {
        Alpine = "alpine",
        Rock = "rock",
        Desert = "desert",
        Tundra = "tundra",
        Volcanic = "volcanic",
        Grassland = "grassland",
        Grey = "grey",
        Custom = "custom",
    }
}

crate::choice_enum! {
    /// Which heights the gradient spans.
    pub enum HeightRange { Graph = "graph", Metres = "metres" }
}

crate::params! {
    pub struct ColorizeParams {
        /// The gradient: a built-in palette, or `custom` for the `stops` text.
        palette: PaletteName = choice(PaletteName::Alpine),
        /// Custom gradient: comma-separated stops "position #rrggbb" from 0 to 1, colours in
        /// sRGB hex, e.g. "0 #2b2118, 0.5 #6f5f4b, 1 #ffffff".
        stops: String = text("0 #2b2118, 0.5 #6f5f4b, 1 #ffffff") as "Stops" if palette in ["custom"],
        /// Heights the gradient spans: the graph's height range, or `low_m` … `high_m`.
        range: HeightRange = choice(HeightRange::Graph),
        /// Height at the gradient's start (position 0).
        low_m: f64 = float(0.0, [-1000.0, 5000.0], [-20000.0, 20000.0], "m") as "Low" if range in ["metres"],
        /// Height at the gradient's end (position 1).
        high_m: f64 = float(2000.0, [-1000.0, 5000.0], [-20000.0, 20000.0], "m") as "High" if range in ["metres"],
        /// Moves every position by this much before the gradient is read (0.1: everything
        /// one tenth of the gradient further along).
        shift: f64 = float(0.0, [-0.5, 0.5], [-1.0, 1.0], ""),
    }
}

crate::node! {
    /// Paints the terrain with a colour gradient by height (or by a mask), such as an alpine or
    /// desert palette.
    /// A colour map (linear RGB) from a multi-stop gradient: the mask's value when one is
    /// connected, else the terrain's height placed between the graph's height range (or `low_m` …
    /// `high_m`), picks the colour; `shift` moves every position along the gradient. Gradients are
    /// interpolated in linear light; built-in palettes: alpine, rock, desert, tundra, volcanic,
    /// grassland, grey (black to white).
    pub struct Colorize {
        id: "colorize",
        label: "Colorize",
        category: Color,
        version: 1,
        params: ColorizeParams,
        inputs: ColorizeIn {
            /// The terrain coloured: its height picks the colour unless a mask is connected
            /// (previews light the colour with it either way).
            height: height,
            /// Picks the colour instead of the height when connected: 0 is the gradient's start, 1 its end.
            mask: mask (optional),
        },
        outputs: ColorizeOut {
            /// The colour map, linear RGB.
            out: color,
        },
        traits: crate::node::Traits {
            swatch: Some(swatch),
            ..crate::node::Traits::DEFAULT
        },
    }
}

/// The editor's swatch of the ramp the parameters choose: `n` colours from its start to its
/// end; `None` for a custom gradient that does not parse.
fn swatch(values: &[crate::node::ParamValue], n: usize) -> Option<Vec<[f32; 3]>> {
    use crate::node::Params;
    let g = gradient(&ColorizeParams::from_values(values)).ok()?;
    Some(
        (0..n)
            .map(|k| g.at((k as f32 + 0.5) / n.max(1) as f32))
            .collect(),
    )
}

/// The gradient the parameters choose; a custom one that does not parse is an error naming
/// the `stops` parameter.
pub fn gradient(p: &ColorizeParams) -> Result<Gradient, NodeError> {
    let name = crate::node::choice_name(p.palette);
    if p.palette == PaletteName::Custom {
        return Gradient::parse(&p.stops)
            .map_err(|e| NodeError::Failed(format!("parameter \"stops\": {e}")));
    }
    palette::builtin()
        .get(name)
        .map(|pal| pal.gradient.clone())
        .ok_or_else(|| NodeError::Failed(format!("no built-in palette \"{name}\"")))
}

/// Colour planes of `gradient` read at `t(v)` for every sample of `driver`.
#[must_use]
pub fn paint(driver: &Field, gradient: &Gradient, t: impl Fn(f32) -> f32 + Sync) -> Field {
    let w = driver.width();
    super::color_rows(w, driver.height(), |y, [r, g, b]| {
        let src = &driver.data()[y * w..(y + 1) * w];
        for (x, &v) in src.iter().enumerate() {
            let c = gradient.at(t(v));
            (r[x], g[x], b[x]) = (c[0], c[1], c[2]);
        }
    })
}

impl Node for Colorize {
    fn eval(
        ctx: &EvalCtx,
        inputs: ColorizeIn,
        p: &ColorizeParams,
    ) -> Result<ColorizeOut, NodeError> {
        let g = gradient(p)?;
        let shift = p.shift as f32;
        let out = if let Some(m) = inputs.mask {
            paint(m, &g, |v| v + shift)
        } else {
            let (lo, hi) = match p.range {
                HeightRange::Graph => (ctx.world.height_min_m, ctx.world.height_max_m),
                HeightRange::Metres => (p.low_m, p.high_m),
            };
            let (lo, span) = (lo as f32, (hi - lo) as f32);
            let inv = if span == 0.0 { 0.0 } else { 1.0 / span };
            paint(inputs.height, &g, |v| (v - lo) * inv + shift)
        };
        Ok(ColorizeOut { out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::ChoiceEnum;

    #[test]
    fn every_palette_option_has_data_and_every_palette_an_option() {
        let data = palette::builtin();
        for &name in PaletteName::NAMES {
            assert!(name == "custom" || data.contains_key(name), "{name}");
        }
        for name in data.keys() {
            assert!(PaletteName::NAMES.contains(&name.as_str()), "{name}");
        }
    }
}
