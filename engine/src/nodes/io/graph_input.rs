//! `graph_input`, `graph_input_mask`, `graph_input_color`, `graph_input_scalar`: where a graph used as a subgraph
//! takes its inputs. In the including graph the subgraph node has one input port per
//! `graph_input` node, named by the node's id; the wire into that port feeds the node. Built
//! on its own, the graph feeds the node from its `default` input (a preview source).

use crate::node::{EvalCtx, Node, NodeError};

crate::params! {
    pub struct GraphInputParams {
        /// What the input is for, shown on the subgraph node's port.
        doc: String = text("") as "Description",
    }
}

crate::node! {
    /// Where a terrain comes into this graph when it is reused as a node inside another graph.
    /// A terrain input of this graph when it is used as a subgraph: the subgraph node gets an input
    /// port named like this node. Built on its own, the graph reads the `default` input instead.
    pub struct GraphInput {
        id: "graph_input",
        label: "Graph input (height)",
        category: Io,
        version: 1,
        params: GraphInputParams,
        inputs: GraphInputIn {
            /// What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
            default: height,
        },
        outputs: GraphInputOut {
            /// The input, in metres.
            out: height,
        },
        traits: crate::node::Traits {
            graph_input: true,
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for GraphInput {
    fn eval(
        _: &EvalCtx,
        i: GraphInputIn,
        _: &GraphInputParams,
    ) -> Result<GraphInputOut, NodeError> {
        Ok(GraphInputOut {
            out: i.default.clone(),
        })
    }
}

crate::node! {
    /// Where a mask comes into this graph when it is reused as a node inside another graph.
    /// A mask input of this graph when it is used as a subgraph: the subgraph node gets an input
    /// port named like this node. Built on its own, the graph reads the `default` input instead.
    pub struct GraphInputMask {
        id: "graph_input_mask",
        label: "Graph input (mask)",
        category: Io,
        version: 1,
        params: GraphInputParams,
        inputs: GraphInputMaskIn {
            /// What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
            default: mask,
        },
        outputs: GraphInputMaskOut {
            /// The input, in [0, 1].
            out: mask,
        },
        traits: crate::node::Traits {
            graph_input: true,
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for GraphInputMask {
    fn eval(
        _: &EvalCtx,
        i: GraphInputMaskIn,
        _: &GraphInputParams,
    ) -> Result<GraphInputMaskOut, NodeError> {
        Ok(GraphInputMaskOut {
            out: i.default.clone(),
        })
    }
}

crate::node! {
    /// Where a colour map comes into this graph when it is reused as a node inside another graph.
    /// A colour input of this graph when it is used as a subgraph: the subgraph node gets an input
    /// port named like this node. Built on its own, the graph reads the `default` input instead.
    pub struct GraphInputColor {
        id: "graph_input_color",
        label: "Graph input (colour)",
        category: Io,
        version: 1,
        params: GraphInputParams,
        inputs: GraphInputColorIn {
            /// What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
            default: color,
        },
        outputs: GraphInputColorOut {
            /// The input, linear RGB.
            out: color,
        },
        traits: crate::node::Traits {
            graph_input: true,
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for GraphInputColor {
    fn eval(
        _: &EvalCtx,
        i: GraphInputColorIn,
        _: &GraphInputParams,
    ) -> Result<GraphInputColorOut, NodeError> {
        Ok(GraphInputColorOut {
            out: i.default.clone(),
        })
    }
}

crate::node! {
    /// Where a quantity such as a drainage area comes into this graph when it is reused inside
    /// another graph.
    /// A scalar input of this graph (a quantity in its own unit, such as a drainage area in m²)
    /// when it is used as a subgraph: the subgraph node gets an input port named like this node.
    /// Built on its own, the graph reads the `default` input instead.
    pub struct GraphInputScalar {
        id: "graph_input_scalar",
        label: "Graph input (scalar)",
        category: Io,
        version: 1,
        params: GraphInputParams,
        inputs: GraphInputScalarIn {
            /// What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
            default: scalar,
        },
        outputs: GraphInputScalarOut {
            /// The input, in its own unit.
            out: scalar,
        },
        traits: crate::node::Traits {
            graph_input: true,
            ..crate::node::Traits::DEFAULT
        },
    }
}

impl Node for GraphInputScalar {
    fn eval(
        _: &EvalCtx,
        i: GraphInputScalarIn,
        _: &GraphInputParams,
    ) -> Result<GraphInputScalarOut, NodeError> {
        Ok(GraphInputScalarOut {
            out: i.default.clone(),
        })
    }
}
