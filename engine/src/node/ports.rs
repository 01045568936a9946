//! Ports: the kinds of data a port carries (height, mask, colour, scalar), the coercions
//! between them, and a port's declaration.
//!
//! # Scalars: quantities in their own unit
//! `PortKind::Scalar` (flow_accumulation's `area`, m²) is a one-plane field like a height, but a
//! kind of its own because every place that interprets a height would get it wrong: the 16-bit
//! exports and previews map heights onto the graph's height range (a drainage area of 10⁷ m²
//! would clip to white), the 3D view draws heights as relief, parity measures them against the
//! height range, and a height input would accept an area as metres without a word. So a scalar
//! is written in its unit by the float formats and over its own range by the integer ones (the
//! manifest's `range_m`), previewed over its own range (on a log scale when it spans decades),
//! measured by parity against its own range, and reaches a height, mask or colour input only
//! through `scalar_to_mask`, which names the values that become 0 and 1 (heights and masks flow
//! into scalar inputs unchanged: they are quantities too). Tiled builds write scalars as float
//! only: the integer formats' range is the whole map's, unknown while tiles are written, whereas
//! the stitched preview is drawn after every tile is in. Grid-defined measures stay information
//! in parity, and so does anything computed from them (`scalar_to_mask` of a per-cell drainage
//! area): a channel is one cell wide at every resolution.

use crate::field::Field;
use crate::field::World;
use std::sync::Arc;

/// The type of data on a port.
///
/// * `Height`: heights in metres, in the graph's world frame.
/// * `Mask`: weights in `[0, 1]`.
/// * `Color`: linear RGB (not sRGB-encoded), each channel nominally in `[0, 1]`; a field of
///   three planes R, G, B.
/// * `Scalar`: a measured quantity per cell in the unit its port's doc names (drainage area
///   in m², …): not a terrain and not a weight, so it is never drawn as relief, never mapped
///   onto the height range and never clamped.
///
/// Connections: the same kind passes unchanged. `Mask → Height` is coerced implicitly by
/// mapping 0 to the graph's `height_min_m` and 1 to `height_max_m`; `Mask → Color` gives the
/// grey `(m, m, m)`; `Color → Mask` gives the relative luminance
/// `Y = 0.2126 R + 0.7152 G + 0.0722 B` (ITU-R BT.709 primaries, linear), clamped to
/// `[0, 1]`. `Height → Mask` and `Height → Color` are refused: insert a `to_mask` or a
/// `colorize` node to choose how heights become weights or colours. `Color → Height` is
/// refused too: a colour is not a shape. A height (metres) or a mask (a dimensionless weight)
/// passes unchanged into a `Scalar` input; a `Scalar` goes into a height, mask or colour
/// input only through a `scalar_to_mask` node, which says how its units become weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    Height,
    Mask,
    Color,
    Scalar,
}

impl PortKind {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PortKind::Height => "height",
            PortKind::Mask => "mask",
            PortKind::Color => "color",
            PortKind::Scalar => "scalar",
        }
    }

    /// Number of channels a field of this kind has.
    #[must_use]
    pub fn channels(self) -> usize {
        match self {
            PortKind::Height | PortKind::Mask | PortKind::Scalar => 1,
            PortKind::Color => 3,
        }
    }
}

/// Rec. 709 luminance weights of linear R, G, B.
pub const LUMINANCE: [f32; 3] = [0.2126, 0.7152, 0.0722];

/// How a value travels along a wire from an output of kind `from` into an input of kind `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coercion {
    /// Same kind, or a height or mask into a scalar input: the field is passed as is.
    None,
    /// Mask to height: `h = height_min_m + m · (height_max_m − height_min_m)`.
    MaskToHeight,
    /// Mask to colour: the grey `(m, m, m)`.
    MaskToColor,
    /// Colour to mask: the luminance `0.2126 R + 0.7152 G + 0.0722 B`, clamped to `[0, 1]`.
    ColorToMask,
}

impl Coercion {
    /// The coercion for a wire, or `None` when the connection is not allowed.
    #[must_use]
    pub fn between(from: PortKind, to: PortKind) -> Option<Coercion> {
        use PortKind::{Color, Height, Mask, Scalar};
        match (from, to) {
            (Height, Height) | (Mask, Mask) | (Color, Color) | (Scalar, Scalar) => {
                Some(Coercion::None)
            }
            (Height | Mask, Scalar) => Some(Coercion::None),
            (Mask, Height) => Some(Coercion::MaskToHeight),
            (Mask, Color) => Some(Coercion::MaskToColor),
            (Color, Mask) => Some(Coercion::ColorToMask),
            (Height, Mask | Color) | (Color, Height | Scalar) | (Scalar, Height | Mask | Color) => {
                None
            }
        }
    }

    /// What to do instead of a refused connection from `from` into `to`.
    #[must_use]
    pub fn refusal_hint(from: PortKind, to: PortKind) -> &'static str {
        match (from, to) {
            (PortKind::Height, PortKind::Color) => {
                "insert a \"colorize\" node to turn heights into colours"
            }
            (PortKind::Color, PortKind::Height) => {
                "a colour is not a terrain; wire it into a mask input (its luminance) if that is what you mean"
            }
            (PortKind::Color, PortKind::Scalar) => {
                "a colour is not a measured quantity; wire it into a mask input (its luminance) if that is what you mean"
            }
            (PortKind::Scalar, _) => {
                "insert a \"scalar_to_mask\" node to say which values become 0 and 1"
            }
            _ => "insert a \"to_mask\" node to turn heights into a mask",
        }
    }

    /// Applies the coercion to a field.
    #[must_use]
    pub fn apply(self, field: &Arc<Field>, world: &World) -> Arc<Field> {
        match self {
            Coercion::None => Arc::clone(field),
            Coercion::MaskToHeight => {
                let lo = world.height_min_m as f32;
                let span = world.height_span_m() as f32;
                Arc::new(field.map(|m| lo + m * span))
            }
            Coercion::MaskToColor => {
                let grey = [
                    field.as_ref().clone(),
                    field.as_ref().clone(),
                    field.as_ref().clone(),
                ];
                Arc::new(Field::from_planes(&grey).unwrap_or_else(|| field.as_ref().clone()))
            }
            Coercion::ColorToMask => Arc::new(luminance(field)),
        }
    }
}

/// The luminance of a colour field as a mask (a single-channel field passes through).
#[must_use]
pub fn luminance(color: &Field) -> Field {
    if color.channels() < 3 {
        return color.clone();
    }
    let p = color.planes();
    let [r, g, b] = LUMINANCE;
    Field::zip3_map(&p[0], &p[1], &p[2], |x, y, z| {
        (r * x + g * y + b * z).clamp(0.0, 1.0)
    })
}

/// An input or output port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortSpec {
    pub name: &'static str,
    pub kind: PortKind,
    /// Inputs only: evaluation fails validation when a required input is not connected.
    pub required: bool,
    pub doc: &'static str,
}

impl PortSpec {
    #[must_use]
    pub const fn height(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Height,
            required: true,
            doc,
        }
    }

    #[must_use]
    pub const fn mask(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Mask,
            required: true,
            doc,
        }
    }

    #[must_use]
    pub const fn color(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Color,
            required: true,
            doc,
        }
    }

    #[must_use]
    pub const fn scalar(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            kind: PortKind::Scalar,
            required: true,
            doc,
        }
    }

    /// The same port, but optional.
    #[must_use]
    pub const fn optional(mut self) -> Self {
        self.required = false;
        self
    }
}
