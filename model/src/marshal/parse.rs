//! Reader for type strings, following Cassandra's `TypeParser`.
//!
//! Grammar: `name [ '(' params ')' ]` where a name is made of `[0-9a-zA-Z-+._&]`; a name without
//! a dot lives in `org.apache.cassandra.db.marshal`. Params are types for `CompositeType` and
//! `ReversedType`, `c=>type` aliases for `DynamicCompositeType`, and `key[=value]` pairs for
//! the simple types (only `reversed=true` means something: it wraps the type in
//! `ReversedType`). Blanks may appear around names and separators; commas may be repeated no
//! more than Cassandra allows. Unlike Cassandra, text after the closing type is an error rather
//! than silently ignored.
//!
//! Also unlike Cassandra, parameters may nest at most [`MAX_TYPE_NESTING`] levels deep: the
//! parser recurses once per level, and a type string comes from clients (schema calls, and the
//! column names of a `DynamicCompositeType`, whose components may carry their type as text), so
//! without a bound a few kilobytes of `ReversedType(` would overflow the stack of the thread
//! parsing them.

use super::{AbstractType, MarshalError, PACKAGE};

/// How deep type parameters may nest: `CompositeType(ReversedType(LongType))` nests two levels.
/// Real types nest a handful; Cassandra's TypeParser has no bound (it recurses like ours).
///
/// The bound also covers composite *values*: a `DynamicCompositeType` component naming its type
/// as text is parsed as if it were nested where the component is (see
/// [`parse_nested_type_string`]), so the comparisons and checks that recurse through values
/// never go deeper than this either.
pub const MAX_TYPE_NESTING: usize = 64;

/// How much of an over-deep type string the error quotes.
const QUOTED_PREFIX_CHARS: usize = 64;

pub(super) fn parse_type_string(input: &str) -> Result<AbstractType, MarshalError> {
    parse_nested_type_string(input, 0)
}

/// Parses a type string found `depth` levels of parameters deep inside another type (the type
/// text of a `DynamicCompositeType` component): its own parameters count from there towards
/// [`MAX_TYPE_NESTING`].
pub(super) fn parse_nested_type_string(input: &str, depth: usize) -> Result<AbstractType, MarshalError> {
    // A `DynamicCompositeType` without parameters enters no level of its own, yet its values'
    // components may name their types again: refusing type text past the bound is what ends
    // that chain.
    if depth > MAX_TYPE_NESTING {
        return Err(nested_too_deeply(input));
    }
    let mut p = Parser { input, pos: 0, depth };
    p.skip_blank();
    // Cassandra's TypeParser.parse maps a missing name to BytesType.
    if p.at_end() {
        return Ok(AbstractType::Bytes);
    }
    let t = p.parse_type()?;
    p.skip_blank();
    if !p.at_end() {
        return Err(p.error("unexpected characters after the type"));
    }
    Ok(t)
}

/// The error for `input`, quoting only its start (a hostile one is tens of kilobytes).
fn nested_too_deeply(input: &str) -> MarshalError {
    let quoted: String = input.chars().take(QUOTED_PREFIX_CHARS).collect();
    let ellipsis = if quoted.len() < input.len() { "..." } else { "" };
    MarshalError::NestedTooDeeply { input: format!("{quoted}{ellipsis}"), limit: MAX_TYPE_NESTING }
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
    /// Levels of parameters the parser is inside (plus where the string itself is nested).
    depth: usize,
}

fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_identifier_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.' | b'_' | b'&')
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.input.as_bytes().get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    fn error(&self, reason: &str) -> MarshalError {
        MarshalError::BadTypeString { input: self.input.to_string(), reason: format!("{reason} at char {}", self.pos) }
    }

    /// Enters one more level of parameters; refused past [`MAX_TYPE_NESTING`].
    fn enter_params(&mut self) -> Result<(), MarshalError> {
        if self.depth >= MAX_TYPE_NESTING {
            return Err(nested_too_deeply(self.input));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave_params(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
    }

    /// Skips blanks and at most one comma; true if anything is left.
    fn skip_blank_and_comma(&mut self) -> bool {
        let mut comma_found = false;
        while let Some(c) = self.peek() {
            if c == b',' {
                if comma_found {
                    return true;
                }
                comma_found = true;
            } else if !is_blank(c) {
                return true;
            }
            self.pos += 1;
        }
        false
    }

    fn read_identifier(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(is_identifier_char) {
            self.pos += 1;
        }
        // Identifier characters are ASCII, so both ends are char boundaries.
        self.input.get(start..self.pos).unwrap_or_default()
    }

    fn parse_type(&mut self) -> Result<AbstractType, MarshalError> {
        self.skip_blank();
        let name = self.read_identifier();
        if name.is_empty() {
            return Err(self.error("expected a type name"));
        }
        self.skip_blank();
        let has_params = self.peek() == Some(b'(');
        let full = if name.contains('.') { name.to_string() } else { format!("{PACKAGE}{name}") };
        let short = full.strip_prefix(PACKAGE).ok_or_else(|| MarshalError::UnknownType(full.clone()))?;
        match short {
            "CompositeType" => {
                let types = if has_params { self.type_params()? } else { Vec::new() };
                if types.is_empty() {
                    return Err(self.error("CompositeType needs at least one component type"));
                }
                Ok(AbstractType::Composite(types))
            }
            "DynamicCompositeType" => {
                let aliases = if has_params { self.alias_params()? } else { Vec::new() };
                Ok(AbstractType::DynamicComposite(aliases))
            }
            "ReversedType" => {
                let mut types = if has_params { self.type_params()? } else { Vec::new() };
                match (types.pop(), types.is_empty()) {
                    (Some(base), true) => Ok(AbstractType::Reversed(Box::new(base))),
                    (popped, _) => {
                        let given = types.len() + usize::from(popped.is_some());
                        Err(self.error(&format!("ReversedType takes exactly one argument, {given} given")))
                    }
                }
            }
            "ListType" | "SetType" | "FrozenType" => {
                let mut types = if has_params { self.type_params()? } else { Vec::new() };
                let element = match (types.pop(), types.is_empty()) {
                    (Some(t), true) => t,
                    (popped, _) => {
                        let given = types.len() + usize::from(popped.is_some());
                        return Err(self.error(&format!("{short} takes exactly one argument, {given} given")));
                    }
                };
                Ok(match short {
                    "ListType" => AbstractType::List { element: Box::new(element), frozen: false },
                    "SetType" => AbstractType::Set { element: Box::new(element), frozen: false },
                    // 3.11's FrozenType(T) is T frozen, its inner collections too.
                    _ => element.frozen(),
                })
            }
            "MapType" => {
                let types = if has_params { self.type_params()? } else { Vec::new() };
                match <[AbstractType; 2]>::try_from(types) {
                    Ok([key, value]) => {
                        Ok(AbstractType::Map { key: Box::new(key), value: Box::new(value), frozen: false })
                    }
                    Err(types) => Err(self.error(&format!("MapType takes exactly 2 arguments, {} given", types.len()))),
                }
            }
            "TupleType" => {
                let types = if has_params { self.type_params()? } else { Vec::new() };
                if types.is_empty() {
                    return Err(self.error("TupleType needs at least one component type"));
                }
                Ok(AbstractType::Tuple(types))
            }
            "ColumnToCollectionType" => {
                if !has_params {
                    return Err(self.error("ColumnToCollectionType needs its columns"));
                }
                self.enter_params()?;
                let columns = self.collection_columns();
                self.leave_params();
                Ok(AbstractType::ColumnToCollection(columns?))
            }
            "UserType" => {
                if !has_params {
                    return Err(self.error("UserType needs its keyspace, name and fields"));
                }
                self.enter_params()?;
                let user = self.user_type_params();
                self.leave_params();
                Ok(AbstractType::User(Box::new(user?)))
            }
            _ => {
                let base = AbstractType::simple_from_short_name(short).ok_or(MarshalError::UnknownType(full))?;
                if has_params && self.reversed_param()? {
                    Ok(AbstractType::Reversed(Box::new(base)))
                } else {
                    Ok(base)
                }
            }
        }
    }

    /// `(T1, T2, ...)`, positioned on the `(`.
    fn type_params(&mut self) -> Result<Vec<AbstractType>, MarshalError> {
        self.enter_params()?;
        let types = self.type_list();
        self.leave_params();
        types
    }

    fn type_list(&mut self) -> Result<Vec<AbstractType>, MarshalError> {
        self.pos += 1;
        let mut types = Vec::new();
        while self.skip_blank_and_comma() {
            if self.peek() == Some(b')') {
                self.pos += 1;
                return Ok(types);
            }
            types.push(self.parse_type()?);
        }
        Err(self.error("unexpected end of string"))
    }

    /// `(a=>T1, b=>T2, ...)`, positioned on the `(`. A repeated alias replaces the earlier one,
    /// as Cassandra's map would.
    fn alias_params(&mut self) -> Result<Vec<(u8, AbstractType)>, MarshalError> {
        self.enter_params()?;
        let aliases = self.alias_list();
        self.leave_params();
        aliases
    }

    fn alias_list(&mut self) -> Result<Vec<(u8, AbstractType)>, MarshalError> {
        self.pos += 1;
        let mut aliases: Vec<(u8, AbstractType)> = Vec::new();
        while self.skip_blank_and_comma() {
            if self.peek() == Some(b')') {
                self.pos += 1;
                return Ok(aliases);
            }
            let alias = match self.read_identifier().as_bytes() {
                [c] => *c,
                _ => return Err(self.error("an alias should be a single character")),
            };
            self.skip_blank();
            if !self.input.get(self.pos..).is_some_and(|rest| rest.starts_with("=>")) {
                return Err(self.error("expecting '=>' token"));
            }
            self.pos += 2;
            let t = self.parse_type()?;
            match aliases.iter_mut().find(|(a, _)| *a == alias) {
                Some(entry) => entry.1 = t,
                None => aliases.push((alias, t)),
            }
        }
        Err(self.error("unexpected end of string"))
    }

    /// `(hexname:T, ...)` of a ColumnToCollectionType, positioned on the `(`.
    fn collection_columns(&mut self) -> Result<Vec<(Vec<u8>, AbstractType)>, MarshalError> {
        self.pos += 1;
        self.collection_columns_after_name()
    }

    /// `(ks,hexname,hexfield:T,...)` of a UserType, positioned on the `(`; not frozen until
    /// a `FrozenType` around it says so (3.11's `getUserTypeParameters`).
    fn user_type_params(&mut self) -> Result<super::UserType, MarshalError> {
        self.pos += 1;
        self.skip_blank();
        let keyspace = self.read_identifier().to_string();
        if keyspace.is_empty() || !self.skip_blank_and_comma() {
            return Err(self.error("expecting a keyspace name"));
        }
        let name = hex::decode(self.read_identifier()).map_err(|_| self.error("a type name should be hex"))?;
        let fields = self.collection_columns_after_name()?;
        if name.is_empty() {
            return Err(self.error("expecting a type name"));
        }
        Ok(super::UserType { keyspace, name, fields, frozen: false })
    }

    /// The `,hexname:T ... )` rest of a parameter list whose first entry was read.
    fn collection_columns_after_name(&mut self) -> Result<Vec<(Vec<u8>, AbstractType)>, MarshalError> {
        let mut columns = Vec::new();
        while self.skip_blank_and_comma() {
            if self.peek() == Some(b')') {
                self.pos += 1;
                return Ok(columns);
            }
            columns.push(self.hex_named_type()?);
        }
        Err(self.error("unexpected end of string"))
    }

    /// `hexname:T`.
    fn hex_named_type(&mut self) -> Result<(Vec<u8>, AbstractType), MarshalError> {
        let name = hex::decode(self.read_identifier()).map_err(|_| self.error("a column name should be hex"))?;
        self.skip_blank();
        if self.peek() != Some(b':') {
            return Err(self.error("expecting ':' token"));
        }
        self.pos += 1;
        let t = self.parse_type()?;
        Ok((name, t))
    }

    /// `(key[=value], ...)` of a simple type, positioned on the `(`: whether `reversed` is set
    /// to `true` or to nothing (Cassandra's `parseDefaultParameters`).
    fn reversed_param(&mut self) -> Result<bool, MarshalError> {
        self.pos += 1;
        let mut reversed = false;
        while self.skip_blank_and_comma() {
            if self.peek() == Some(b')') {
                self.pos += 1;
                return Ok(reversed);
            }
            let key = self.read_identifier();
            let mut value = "";
            self.skip_blank();
            match self.peek() {
                Some(b'=') => {
                    self.pos += 1;
                    self.skip_blank();
                    value = self.read_identifier();
                }
                Some(b',' | b')') => {}
                _ => return Err(self.error("unexpected character in parameters")),
            }
            if key == "reversed" {
                reversed = value.is_empty() || value == "true";
            }
        }
        Err(self.error("unexpected end of string"))
    }
}
