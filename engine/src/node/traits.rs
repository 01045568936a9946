//! Facts about a node type that code outside its file needs (parity, bundles, subgraphs, the
//! editor), declared with the node (`traits:` in [`node!`](crate::node!)) instead of being
//! keyed on its id elsewhere.

use super::ParamValue;

/// How `orogen parity` judges a node's outputs between a preview and a build (the shares
/// are of each output's range; see `parity/mod.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Parity {
    /// By category: generators, filters, masks and colour within 0.25%; water nodes' first
    /// output within 0.25% and the rest within 1.5%; erosion's height within 1.5%, the
    /// amount of its change within 0.85–1.15 and the change's correlation at least 0.9.
    ByCategory,
    /// An erosion node whose change correlates less from grid to grid (random droplets):
    /// as [`Parity::ByCategory`] with this correlation floor.
    ErosionCorrelation(f64),
    /// Mean |Δ| within this share of the range, for every output.
    Within(f64),
    /// Defined on the grid's own cells (a channel one cell wide at every resolution): shown
    /// for information, never judged.
    Information,
}

/// A colour ramp the editor draws under a node's parameters: `n` colours (linear RGB) from
/// the ramp's start to its end for the given parameter values, or `None` when they do not
/// describe one (the node's own error says why).
pub type Swatch = fn(values: &[ParamValue], n: usize) -> Option<Vec<[f32; 3]>>;

/// A node type's traits; [`Traits::DEFAULT`] for most nodes.
#[derive(Clone, Copy, Debug)]
pub struct Traits {
    /// How parity judges it.
    pub parity: Parity,
    /// The text parameter naming a file the node reads, relative to its graph's folder:
    /// bundles pack that file, and a subgraph's copy of the node is rebased onto the
    /// subgraph file's folder when it is expanded.
    pub file_param: Option<&'static str>,
    /// A graph input: inside a subgraph it hands on the subgraph node's input of its name
    /// (its first input port), so it passes that field through unchanged.
    pub graph_input: bool,
    /// A colour ramp the editor shows with the parameters.
    pub swatch: Option<Swatch>,
    /// The parameter that is the sea level (metres) this node floods to: the editor's terrain
    /// colours draw water below it.
    pub sea_level_param: Option<&'static str>,
    /// The text parameter naming the supplied array the node reads (`array_input`): the
    /// node's cache key holds that array's content hash.
    pub array_param: Option<&'static str>,
}

impl Traits {
    /// No special traits: parity by category, no file, not a graph input, no swatch.
    pub const DEFAULT: Self = Self {
        parity: Parity::ByCategory,
        file_param: None,
        graph_input: false,
        swatch: None,
        sea_level_param: None,
        array_param: None,
    };
}

impl Default for Traits {
    fn default() -> Self {
        Self::DEFAULT
    }
}
