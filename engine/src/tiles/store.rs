//! The results of a plan's stages, as later tasks read them: every global node's outputs over
//! each tile's owned samples, in raw little-endian f32 files in the plan's work folder
//! (`.work/<key>/s<i>/tile-<k>.p<port>.f32`, one plane after another for colour ports), read
//! back over any window by seeking to the rows it needs.

use super::{Grid, Plan};
use crate::field::Field;
use crate::node::Window;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// A stage's output file for tile `k` and output port `port`.
pub(super) fn tile_file(work: &Path, stage: usize, k: usize, port: usize) -> PathBuf {
    work.join(format!("s{stage}"))
        .join(format!("tile-{k}.p{port}.f32"))
}

/// The raw bytes of `field` (every plane) for a stage file.
pub(super) fn encode(field: &Field) -> Vec<u8> {
    field.data().iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The stages before `upto` of a plan, readable as [`crate::eval::StoredFields`].
pub(super) struct Store {
    work: PathBuf,
    grid: Grid,
    /// Stage index by node id, and each node's output channels per port.
    nodes: std::collections::HashMap<String, (usize, Vec<usize>)>,
    tag: [u8; 16],
}

impl Store {
    /// The stages `0..upto` of `plan` for `graph` (flattened), in `work`.
    pub(super) fn new(
        plan: &Plan,
        graph: &crate::graph::Graph,
        work: &Path,
        upto: usize,
    ) -> Result<Self, String> {
        let mut nodes = std::collections::HashMap::new();
        for (si, st) in plan.stages.iter().enumerate().take(upto) {
            let n = graph.node(&st.node).ok_or_else(|| {
                format!(
                    "the plan's stage s{si} is node \"{}\", which the graph does not have (plan it again)",
                    st.node
                )
            })?;
            let channels = n
                .def
                .spec
                .outputs
                .iter()
                .map(|p| p.kind.channels())
                .collect();
            nodes.insert(st.node.clone(), (si, channels));
        }
        let mut h = blake3::Hasher::new();
        h.update(plan.key.as_bytes());
        h.update(&(upto as u64).to_le_bytes());
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&h.finalize().as_bytes()[..16]);
        Ok(Self {
            work: work.to_path_buf(),
            grid: plan.grid,
            nodes,
            tag,
        })
    }

    /// Reads plane `c` of port `port` of stage `si` over `want` into `out` (rows of `want`).
    fn read_plane(
        &self,
        si: usize,
        port: usize,
        (c, channels): (usize, usize),
        want: Window,
        out: &mut [f32],
    ) -> Result<(), String> {
        let g = self.grid;
        let mut row = Vec::new();
        for k in 0..g.count() {
            let (i, j) = g.coords(k);
            let o = g.owned(i, j);
            let (x0, x1, y0, y1) = o.overlap(&want);
            if x0 >= x1 || y0 >= y1 {
                continue;
            }
            let path = tile_file(&self.work, si, k, port);
            let fail = |e: std::io::Error| {
                format!(
                    "cannot read {} (stage s{si}'s result; run its tasks first): {e}",
                    path.display()
                )
            };
            let plane = (o.width * o.height) as u64 * 4;
            let meta = std::fs::symlink_metadata(&path).map_err(fail)?;
            if !meta.file_type().is_file() || meta.len() != plane * channels as u64 {
                return Err(format!(
                    "{} is not the {} bytes stage s{si} writes (run its tasks again)",
                    path.display(),
                    plane * channels as u64
                ));
            }
            let mut f = std::fs::File::open(&path).map_err(fail)?;
            row.resize((x1 - x0) * 4, 0);
            for y in y0..y1 {
                let at = c as u64 * plane + (((y - o.y0) * o.width + (x0 - o.x0)) * 4) as u64;
                f.seek(SeekFrom::Start(at)).map_err(fail)?;
                f.read_exact(&mut row).map_err(fail)?;
                let dst = &mut out[(y - want.y0) * want.width + (x0 - want.x0)..][..x1 - x0];
                for (d, b) in dst.iter_mut().zip(row.chunks_exact(4)) {
                    *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
        }
        Ok(())
    }
}

impl crate::eval::StoredFields for Store {
    fn has(&self, id: &str) -> bool {
        self.nodes.contains_key(id)
    }

    fn read(&self, id: &str, want: Window) -> Result<Vec<Field>, String> {
        let (si, channels) = self
            .nodes
            .get(id)
            .ok_or_else(|| format!("node \"{id}\" is not stored"))?;
        let mut out = Vec::with_capacity(channels.len());
        for (port, &ch) in channels.iter().enumerate() {
            let mut planes = Vec::with_capacity(ch);
            for c in 0..ch {
                let mut data = vec![0.0f32; want.width * want.height];
                self.read_plane(*si, port, (c, ch), want, &mut data)?;
                planes.push(
                    Field::from_vec(want.width, want.height, data)
                        .ok_or("stored field size mismatch")?,
                );
            }
            out.push(if ch == 1 {
                planes.pop().ok_or("no plane")?
            } else {
                Field::from_planes(&planes).ok_or("stored planes size mismatch")?
            });
        }
        Ok(out)
    }

    fn tag(&self) -> [u8; 16] {
        self.tag
    }
}
