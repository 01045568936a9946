//! `coarse.bin`: the coarse task's result (each global node's inputs and outputs over the
//! whole world) for the tile tasks, possibly on other machines.
//!
//! Layout: the magic `OROGENC1`, a little-endian `u32` header length, a JSON header (the
//! resolution, and per node the indices of its input and output fields, `null` for an
//! unwired input), then every field's samples as little-endian `f32`, row-major, in index
//! order. All fields are `resolution × resolution`.

use crate::eval::{Coarse, CoarseNode};
use crate::field::Field;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"OROGENC1";

#[derive(Serialize, Deserialize)]
struct Header {
    resolution: usize,
    fields: usize,
    nodes: BTreeMap<String, (Vec<Option<usize>>, Vec<usize>)>,
}

/// Writes `coarse` to `path` atomically.
pub fn write(path: &Path, coarse: &Coarse) -> std::io::Result<()> {
    let mut fields: Vec<Arc<Field>> = Vec::new();
    let mut index = |f: &Arc<Field>| {
        fields.push(Arc::clone(f));
        fields.len() - 1
    };
    let mut nodes = BTreeMap::new();
    for (id, n) in &coarse.nodes {
        let inputs = n
            .inputs
            .iter()
            .map(|f| f.as_ref().map(&mut index))
            .collect();
        let outputs = n.outputs.iter().map(&mut index).collect();
        nodes.insert(id.clone(), (inputs, outputs));
    }
    let header = serde_json::to_vec(&Header {
        resolution: coarse.resolution,
        fields: fields.len(),
        nodes,
    })
    .map_err(std::io::Error::other)?;
    let len = u32::try_from(header.len()).map_err(std::io::Error::other)?;
    crate::io::atomic::write_atomic(path, |w| {
        w.write_all(MAGIC)?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(&header)?;
        for f in &fields {
            let bytes: Vec<u8> = f.data().iter().flat_map(|v| v.to_le_bytes()).collect();
            w.write_all(&bytes)?;
        }
        Ok(())
    })
}

/// Reads a file [`write`] wrote.
pub fn read(path: &Path, resolution: usize) -> Result<Coarse, String> {
    read_nodes(path, resolution, None)
}

/// Reads only node `id`'s fields of a file [`write`] wrote (a stage task needs one node's, not
/// every global node's).
pub fn read_node(path: &Path, resolution: usize, id: &str) -> Result<CoarseNode, String> {
    let mut c = read_nodes(path, resolution, Some(id))?;
    c.nodes.remove(id).ok_or_else(|| {
        format!(
            "{}: the coarse pass has no node \"{id}\"",
            crate::io::owned::escape_path(path)
        )
    })
}

fn read_nodes(path: &Path, resolution: usize, only: Option<&str>) -> Result<Coarse, String> {
    use std::io::{Seek, SeekFrom};
    let err = |m: String| format!("{}: {m}", crate::io::owned::escape_path(path));
    // A regular file only (never a link, a FIFO or a device), whose size must be what its
    // header says before anything that size is allocated.
    let meta = std::fs::symlink_metadata(path).map_err(|e| err(format!("cannot open: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(err("not a regular file".into()));
    }
    let file =
        crate::io::trust::open_nonblocking(path).map_err(|e| err(format!("cannot open: {e}")))?;
    let file_len = file.metadata().map_err(|e| err(e.to_string()))?.len();
    let mut r = std::io::BufReader::new(file);
    let mut magic = [0u8; 8];
    let mut len = [0u8; 4];
    r.read_exact(&mut magic)
        .and_then(|()| r.read_exact(&mut len))
        .map_err(|e| err(e.to_string()))?;
    if &magic != MAGIC {
        return Err(err("not a coarse result of an Orogen plan".into()));
    }
    let header_len = u64::from(u32::from_le_bytes(len));
    if header_len > crate::io::owned::MAX_STATE_BYTES || 12 + header_len > file_len {
        return Err(err(format!(
            "a header of {header_len} bytes does not fit the file"
        )));
    }
    let mut header = vec![0u8; header_len as usize];
    r.read_exact(&mut header).map_err(|e| err(e.to_string()))?;
    let h: Header = serde_json::from_slice(&header).map_err(|e| err(e.to_string()))?;
    let n = h.resolution;
    let plane = n as u64 * n as u64 * 4;
    let samples = (h.fields as u64)
        .checked_mul(plane)
        .and_then(|b| b.checked_add(12 + header_len));
    if n != resolution || samples != Some(file_len) {
        return Err(err(format!(
            "expected {resolution}² fields filling the file ({file_len} bytes), the header says {} fields of {n}²",
            h.fields
        )));
    }
    let mut bytes = vec![0u8; plane as usize];
    let mut cache: BTreeMap<usize, Arc<Field>> = BTreeMap::new();
    let mut get = |i: usize| -> Result<Arc<Field>, String> {
        if let Some(f) = cache.get(&i) {
            return Ok(Arc::clone(f));
        }
        if i >= h.fields {
            return Err(err(format!("field {i} missing")));
        }
        r.seek(SeekFrom::Start(12 + header_len + i as u64 * plane))
            .and_then(|_| r.read_exact(&mut bytes))
            .map_err(|e| err(format!("truncated: {e}")))?;
        let data = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let f = Arc::new(Field::from_vec(n, n, data).ok_or_else(|| err("bad field size".into()))?);
        cache.insert(i, Arc::clone(&f));
        Ok(f)
    };
    let mut nodes = BTreeMap::new();
    for (id, (inputs, outputs)) in h.nodes {
        if only.is_some_and(|o| o != id) {
            continue;
        }
        let inputs = inputs
            .into_iter()
            .map(|i| i.map(&mut get).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        let outputs = outputs
            .into_iter()
            .map(&mut get)
            .collect::<Result<Vec<_>, _>>()?;
        nodes.insert(
            id,
            CoarseNode {
                inputs,
                outputs: outputs.into(),
            },
        );
    }
    Ok(Coarse {
        resolution: n,
        nodes,
    })
}
