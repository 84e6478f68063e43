//! A submission's [`Fingerprints`] as bytes, for the batch store: a magic and version, a JSON
//! header (files, token count, notes), the fingerprints as fixed-width little-endian records,
//! then the texts. [`decode`] can skip the texts (most of the bytes), which are only needed to
//! quote the fragments of flagged pairs. Malformed bytes are an error, never a panic.

use super::winnow::Print;
use super::{FileEntry, Fingerprints};
use serde::{Deserialize, Serialize};

const MAGIC: &[u8; 8] = b"AUSIMFP1";
const RECORD: usize = 24;

#[derive(Serialize, Deserialize)]
struct Header {
    files: Vec<FileEntry>,
    tokens: u64,
    notes: Vec<String>,
}

/// Why stored fingerprints cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("stored fingerprints unreadable: {0}")]
    Malformed(&'static str),
    #[error("stored fingerprints unreadable: {0}")]
    Header(#[source] serde_json::Error),
}

pub fn encode(fp: &Fingerprints) -> Vec<u8> {
    let header = serde_json::to_vec(&Header {
        files: fp.files.clone(),
        tokens: fp.tokens,
        notes: fp.notes.clone(),
    })
    .unwrap_or_else(|_| b"{}".to_vec());
    let texts = fp.texts.as_deref().unwrap_or(&[]);
    let mut out = Vec::with_capacity(
        16 + header.len()
            + fp.prints.len() * RECORD
            + texts.iter().map(|t| t.len() + 4).sum::<usize>(),
    );
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&(fp.prints.len() as u32).to_le_bytes());
    for p in &fp.prints {
        out.extend_from_slice(&p.hash.to_le_bytes());
        out.extend_from_slice(&p.file.to_le_bytes());
        out.extend_from_slice(&p.pos.to_le_bytes());
        out.extend_from_slice(&p.line_from.to_le_bytes());
        out.extend_from_slice(&p.line_to.to_le_bytes());
    }
    out.extend_from_slice(&(texts.len() as u32).to_le_bytes());
    for t in texts {
        out.extend_from_slice(&(t.len() as u32).to_le_bytes());
        out.extend_from_slice(t.as_bytes());
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or(DecodeError::Malformed("truncated"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
}

/// Reads fingerprints back; `with_texts` also reads the texts.
pub fn decode(bytes: &[u8], with_texts: bool) -> Result<Fingerprints, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(MAGIC.len())? != MAGIC {
        return Err(DecodeError::Malformed(
            "not a fingerprint record of this version",
        ));
    }
    let hlen = r.u32()? as usize;
    let header: Header = serde_json::from_slice(r.take(hlen)?).map_err(DecodeError::Header)?;
    let n = r.u32()? as usize;
    if n.checked_mul(RECORD)
        .is_none_or(|b| b > bytes.len().saturating_sub(r.at))
    {
        return Err(DecodeError::Malformed("truncated"));
    }
    let mut prints = Vec::with_capacity(n);
    for _ in 0..n {
        let p = Print {
            hash: r.u64()?,
            file: r.u32()?,
            pos: r.u32()?,
            line_from: r.u32()?,
            line_to: r.u32()?,
        };
        if p.file as usize >= header.files.len() {
            return Err(DecodeError::Malformed(
                "a fingerprint names a file that is not listed",
            ));
        }
        prints.push(p);
    }
    let texts = if with_texts {
        let m = r.u32()? as usize;
        if m != header.files.len() {
            return Err(DecodeError::Malformed("texts do not match the files"));
        }
        let mut texts = Vec::with_capacity(m);
        for _ in 0..m {
            let len = r.u32()? as usize;
            texts.push(String::from_utf8_lossy(r.take(len)?).into_owned());
        }
        Some(texts)
    } else {
        None
    };
    Ok(Fingerprints {
        files: header.files,
        tokens: header.tokens,
        notes: header.notes,
        prints,
        texts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_round_trip_and_bad_bytes_are_errors() {
        let fp = Fingerprints {
            files: vec![FileEntry {
                path: "a.py".into(),
                tokens: 40,
            }],
            tokens: 40,
            notes: vec!["n".into()],
            prints: vec![Print {
                hash: u64::MAX - 3,
                file: 0,
                pos: 7,
                line_from: 2,
                line_to: 3,
            }],
            texts: Some(vec!["x = 1\n".into()]),
        };
        let bytes = encode(&fp);
        assert_eq!(decode(&bytes, true).unwrap(), fp);
        let light = decode(&bytes, false).unwrap();
        assert_eq!((light.prints, light.texts), (fp.prints.clone(), None));
        for cut in [0, 5, 12, bytes.len() - 3] {
            assert!(decode(&bytes[..cut], true).is_err(), "cut {cut}");
        }
        let mut huge = bytes.clone();
        let at = 8
            + 4
            + serde_json::to_vec(&Header {
                files: fp.files.clone(),
                tokens: 40,
                notes: vec!["n".into()],
            })
            .unwrap()
            .len();
        huge[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge, false).is_err());
    }
}
