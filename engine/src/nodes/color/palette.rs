//! Gradients: multi-stop colour ramps, the built-in palettes (data in `palettes.json`) and
//! the text form of a custom gradient.

use crate::io::heightmap::srgb_decode;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A gradient: stops at increasing positions in `[0, 1]`, colours in linear RGB.
/// Interpolated linearly (in linear light) between stops, constant beyond the first and last.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    stops: Vec<(f32, [f32; 3])>,
}

impl Gradient {
    /// A gradient from `(position, linear RGB)` stops; positions must be finite, in
    /// `[0, 1]` and non-decreasing, and there must be at least one stop.
    pub fn new(stops: Vec<(f32, [f32; 3])>) -> Result<Self, String> {
        if stops.is_empty() {
            return Err("a gradient needs at least one stop".into());
        }
        for (k, &(t, _)) in stops.iter().enumerate() {
            if !(0.0..=1.0).contains(&t) {
                return Err(format!(
                    "stop {} is at {t}; positions are between 0 and 1",
                    k + 1
                ));
            }
            if k > 0 && t < stops[k - 1].0 {
                return Err(format!(
                    "stop {} ({t}) comes before stop {} ({}); list stops from 0 to 1",
                    k + 1,
                    k,
                    stops[k - 1].0
                ));
            }
        }
        Ok(Self { stops })
    }

    /// Parses `"0 #2b2118, 0.5 #6f5f4b, 1 #ffffff"`: comma-separated stops, each a position
    /// in `[0, 1]` and an sRGB colour `#rrggbb`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut stops = Vec::new();
        for (k, part) in text.split(',').enumerate() {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let mut words = part.split_whitespace();
            let (Some(t), Some(c), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!(
                    "stop {} \"{part}\" is not \"position #rrggbb\" (e.g. \"0.5 #6f5f4b\")",
                    k + 1
                ));
            };
            let t: f32 = t
                .parse()
                .map_err(|_| format!("stop {}: \"{t}\" is not a number", k + 1))?;
            let c = parse_hex(c).map_err(|e| format!("stop {}: {e}", k + 1))?;
            stops.push((t, c));
        }
        Self::new(stops)
    }

    /// The colour at `t` (linear RGB); NaN gives the first stop.
    #[inline]
    #[must_use]
    pub fn at(&self, t: f32) -> [f32; 3] {
        let s = &self.stops;
        let first = s[0];
        if t.is_nan() || t <= first.0 {
            return first.1;
        }
        // The first stop at or beyond t (stops are few: a linear scan beats a search).
        let Some(k) = s.iter().position(|&(p, _)| p >= t) else {
            return s[s.len() - 1].1;
        };
        let ((p0, c0), (p1, c1)) = (s[k - 1], s[k]);
        let u = if p1 > p0 { (t - p0) / (p1 - p0) } else { 1.0 };
        std::array::from_fn(|i| c0[i] + (c1[i] - c0[i]) * u)
    }

    /// The stops, `(position, linear RGB)`.
    #[must_use]
    pub fn stops(&self) -> &[(f32, [f32; 3])] {
        &self.stops
    }
}

/// An sRGB `#rrggbb` colour as linear RGB.
pub fn parse_hex(text: &str) -> Result<[f32; 3], String> {
    let hex = text.strip_prefix('#').unwrap_or(text);
    let bad = || format!("\"{text}\" is not a colour \"#rrggbb\"");
    if hex.len() != 6 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut c = [0.0; 3];
    for (k, v) in c.iter_mut().enumerate() {
        let byte = u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).map_err(|_| bad())?;
        *v = srgb_decode(f32::from(byte) / 255.0);
    }
    Ok(c)
}

/// A built-in palette: its doc and gradient.
#[derive(Clone, Debug)]
pub struct Palette {
    pub doc: String,
    pub gradient: Gradient,
}

/// The built-in palettes by name, read once from `palettes.json` (compiled in).
#[must_use]
pub fn builtin() -> &'static BTreeMap<String, Palette> {
    static P: OnceLock<BTreeMap<String, Palette>> = OnceLock::new();
    P.get_or_init(|| parse_palettes(include_str!("palettes.json")).unwrap_or_default())
}

#[derive(serde::Deserialize)]
struct PaletteFile {
    doc: String,
    stops: Vec<(f32, String)>,
}

/// Parses the palette file (`_doc` keys are comments).
fn parse_palettes(text: &str) -> Result<BTreeMap<String, Palette>, String> {
    let raw: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    for (name, v) in raw {
        if name.starts_with('_') {
            continue;
        }
        let p: PaletteFile = serde_json::from_value(v).map_err(|e| format!("{name}: {e}"))?;
        let stops = p
            .stops
            .iter()
            .map(|(t, c)| parse_hex(c).map(|c| (*t, c)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{name}: {e}"))?;
        let gradient = Gradient::new(stops).map_err(|e| format!("{name}: {e}"))?;
        out.insert(
            name,
            Palette {
                doc: p.doc,
                gradient,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_file_parses() {
        let p = parse_palettes(include_str!("palettes.json")).expect("palettes.json");
        assert!(p.len() >= 6, "{:?}", p.keys());
        assert_eq!(p.len(), builtin().len());
    }

    #[test]
    fn hex_colours_decode_from_srgb() {
        assert_eq!(parse_hex("#000000"), Ok([0.0; 3]));
        assert_eq!(parse_hex("#ffffff"), Ok([1.0; 3]));
        // sRGB 50% grey is about 21.4% linear.
        let g = parse_hex("#808080").expect("grey")[0];
        assert!((g - 0.2158).abs() < 1e-3, "{g}");
        assert_eq!(
            parse_hex("#12345"),
            Err("\"#12345\" is not a colour \"#rrggbb\"".to_owned())
        );
        assert!(parse_hex("#gg0000").is_err());
    }

    #[test]
    fn gradients_interpolate_between_stops_and_hold_beyond() {
        let g = Gradient::new(vec![(0.25, [0.0, 0.0, 0.0]), (0.75, [1.0, 0.5, 0.0])])
            .expect("gradient");
        assert_eq!(g.at(0.0), [0.0, 0.0, 0.0]);
        assert_eq!(g.at(0.25), [0.0, 0.0, 0.0]);
        assert_eq!(g.at(0.5), [0.5, 0.25, 0.0]);
        assert_eq!(g.at(0.75), [1.0, 0.5, 0.0]);
        assert_eq!(g.at(2.0), [1.0, 0.5, 0.0]);
        assert_eq!(g.at(f32::NAN), [0.0, 0.0, 0.0]);
    }

    #[test]
    fn custom_gradients_parse_with_errors_that_name_the_stop() {
        let g = Gradient::parse("0 #000000, 1 #ffffff").expect("parse");
        assert_eq!(g.stops().len(), 2);
        assert_eq!(
            Gradient::parse("0 #000000, 0.5"),
            Err("stop 2 \"0.5\" is not \"position #rrggbb\" (e.g. \"0.5 #6f5f4b\")".to_owned())
        );
        assert_eq!(
            Gradient::parse("0.6 #000000, 0.5 #ffffff"),
            Err("stop 2 (0.5) comes before stop 1 (0.6); list stops from 0 to 1".to_owned())
        );
        assert_eq!(
            Gradient::parse("x #000000"),
            Err("stop 1: \"x\" is not a number".to_owned())
        );
        assert_eq!(
            Gradient::parse("1.5 #000000"),
            Err("stop 1 is at 1.5; positions are between 0 and 1".to_owned())
        );
        assert_eq!(
            Gradient::parse(" "),
            Err("a gradient needs at least one stop".to_owned())
        );
    }
}
