//! `<InitialToken>` with `<NumTokens>`: the tokens a node takes on its first start.

use model::dht::Partitioner;

use super::values::{bad, Elements};
use super::ConfigError;

/// The tokens of `<InitialToken>`: one token as in 0.6, or (with virtual nodes) a comma
/// separated list, as Cassandra 1.2+ reads `initial_token`. Each is checked against the
/// partitioner, and a list must hold exactly `num_tokens` tokens (Cassandra refuses a
/// mismatch too) with no token twice. Empty or absent: no tokens, the node picks its own.
pub(crate) fn initial_tokens(
    els: &Elements<'_>,
    partitioner_class: &str,
    num_tokens: u32,
) -> Result<Vec<String>, ConfigError> {
    let Some((text, line)) = els.text("InitialToken")? else { return Ok(Vec::new()) };
    let tokens: Vec<String> = text.split(',').map(|t| t.trim().to_string()).collect();
    if tokens.iter().any(String::is_empty) {
        return Err(bad("InitialToken", line, text, "an empty token in the list"));
    }
    if tokens.len() != num_tokens as usize {
        return Err(bad(
            "InitialToken",
            line,
            text,
            format!("lists {} token(s) but <NumTokens> is {num_tokens}; give one token per virtual node", tokens.len()),
        ));
    }
    // A partitioner Sibyl lacks is reported by the daemon when it opens storage; its tokens
    // can only be compared as text here.
    let mut seen = Vec::with_capacity(tokens.len());
    for t in &tokens {
        let key = match Partitioner::from_class_name(partitioner_class) {
            Ok(p) => p.token_from_string(t).map_err(|e| bad("InitialToken", line, text, e.to_string()))?.0,
            Err(_) => t.as_bytes().into(),
        };
        if seen.contains(&key) {
            return Err(bad("InitialToken", line, text, format!("token {t} is listed twice")));
        }
        seen.push(key);
    }
    Ok(tokens)
}
