//! `array_input`: a heightmap handed to the evaluation by the program running it (a numpy
//! array from the Python package), resampled to the build resolution like `import`.

use crate::node::{EvalCtx, Node, NodeError};

crate::choice_enum! {
    /// What the array's samples are.
    pub enum ArrayValues { Metres = "metres", Relative = "relative" }
}

crate::params! {
    pub struct ArrayInputParams {
        /// The name the array is supplied under (Python: `graph.set_array(name, array)` or `graph.build(arrays={name: array})`).
        name: String = text("") as "Array name",
        /// The samples are metres, or fractions of the graph's height range (0 → height_min_m, 1 → height_max_m).
        values: ArrayValues = choice(ArrayValues::Metres),
    }
}

crate::node! {
    /// A terrain handed in by a Python script as a numpy array, to shape or erode data made
    /// elsewhere.
    /// A heightmap supplied by the program evaluating the graph, by name: from Python, a 2-D
    /// numpy array (rows north to south) given to `Graph.set_array` or `Graph.build(arrays=…)`.
    /// Resampled bilinearly to the build resolution and stretched over the whole world, as
    /// `import` does with a file; NaN samples are no data, filled from the samples around them.
    /// Built where no array of that name is supplied (the command line, the editor) it fails,
    /// saying so.
    pub struct ArrayInput {
        id: "array_input",
        label: "Array input (Python)",
        category: Io,
        version: 1,
        params: ArrayInputParams,
        inputs: ArrayInputIn {
        },
        outputs: ArrayInputOut {
            /// The array, in metres.
            out: height,
        },
        traits: crate::node::Traits {
            array_param: Some("name"),
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for ArrayInput {
    fn eval(
        ctx: &EvalCtx,
        _: ArrayInputIn,
        p: &ArrayInputParams,
    ) -> Result<ArrayInputOut, NodeError> {
        if p.name.is_empty() {
            return Err(NodeError::Failed(
                "parameter \"name\" is empty: name the array this node reads".into(),
            ));
        }
        let Some(a) = ctx.arrays.and_then(|a| a.get(&p.name)) else {
            let given: Vec<&str> = ctx.arrays.map(|a| a.names().collect()).unwrap_or_default();
            return Err(NodeError::Failed(format!(
                "no array named \"{}\" was supplied ({}); arrays are given from Python with Graph.set_array or build(arrays=…) (elsewhere, read the heights from a file with an import node)",
                p.name,
                if given.is_empty() {
                    "none were".to_owned()
                } else {
                    format!("supplied: {}", given.join(", "))
                }
            )));
        };
        let w = ctx.window;
        let mut out = a
            .field
            .resample_bilinear_window(ctx.resolution, (w.x0, w.y0, w.width, w.height));
        if p.values == ArrayValues::Relative {
            let lo = ctx.world.height_min_m as f32;
            let span = ctx.world.height_span_m() as f32;
            out.map_in_place(|v| lo + v * span);
        }
        Ok(ArrayInputOut { out })
    }
}
