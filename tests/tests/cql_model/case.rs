//! Talking to the node: one case's statements, and each read compared with the model.

use super::*;

pub(crate) fn cql(c: &mut Client, text: &str) -> thrift::Result<t::CqlResult> {
    c.execute_cql3_query(text.as_bytes().to_vec(), t::Compression::NONE, t::ConsistencyLevel::ONE)
}

/// The rows of a result: each row's column names and values.
pub(crate) fn result_rows(r: &t::CqlResult) -> Result<Vec<(Vec<String>, Row)>, String> {
    if r.type_ != t::CqlResultType::ROWS {
        return Err(format!("not ROWS: {r:?}"));
    }
    let Some(rows) = r.rows.as_ref() else { return Err(format!("ROWS without rows: {r:?}")) };
    Ok(rows
        .iter()
        .map(|row| {
            let names = row.columns.iter().map(|c| String::from_utf8_lossy(&c.name).into_owned()).collect();
            let values = row.columns.iter().map(|c| c.value.clone().map(V)).collect();
            (names, values)
        })
        .collect())
}

/// One case: its table, the model, and every statement run so far (for the failure report).
pub(crate) struct Case<'a> {
    pub(crate) node: &'a Node,
    pub(crate) c: Client,
    pub(crate) table: String,
    pub(crate) model: Model,
    pub(crate) log: Vec<String>,
}

impl Case<'_> {
    pub(crate) fn schema(&self) -> &Schema {
        &self.model.schema
    }

    pub(crate) fn fail(&self, what: String) -> TestCaseError {
        TestCaseError::fail(format!(
            "{what}\n---- statements of this case, in order ----\n{};\n----",
            self.log.join(";\n")
        ))
    }

    pub(crate) fn write(&mut self, statement: String) -> Result<(), TestCaseError> {
        self.log.push(statement.clone());
        WRITES.fetch_add(1, AtomicOrdering::Relaxed);
        match cql(&mut self.c, &statement) {
            Ok(r) if r.type_ == t::CqlResultType::VOID => Ok(()),
            Ok(r) => Err(self.fail(format!("{statement}\nanswered {r:?}, not VOID"))),
            Err(e) => Err(self.fail(format!("{statement}\nfailed: {e:?}"))),
        }
    }

    pub(crate) fn tool(&mut self, command: &str) -> Result<(), TestCaseError> {
        self.log.push(format!("-- sibyltool {command} {KS} {}", self.table));
        // A major compaction asked while a background one (after flushes) merges some of the
        // same SSTables is refused ("try again when it ends"): it is, for a while.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let run = self.node.tool(&[command, KS, &self.table]);
            TOOL_RUNS.fetch_add(1, AtomicOrdering::Relaxed);
            if run.code == Some(0) {
                return Ok(());
            }
            if !run.stderr.contains("is already running; try again when it ends") || Instant::now() > deadline {
                return Err(self.fail(format!("sibyltool {command} {KS} {} failed: {run:?}", self.table)));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `query` and compares its rows with `expected` (in order, or as multisets).
    pub(crate) fn expect(
        &mut self,
        query: &str,
        names: &[String],
        types: &[Ty],
        mut expected: Vec<Row>,
        ordered: bool,
    ) -> Result<(), TestCaseError> {
        READS.fetch_add(1, AtomicOrdering::Relaxed);
        let answer = cql(&mut self.c, query).map_err(|e| self.fail(format!("{query}\nfailed: {e:?}")))?;
        let rows = result_rows(&answer).map_err(|e| self.fail(format!("{query}\n{e}")))?;
        if let Some((got, _)) = rows.iter().find(|(n, _)| n != names) {
            return Err(self.fail(format!("{query}\ncolumns {got:?}, expected {names:?}")));
        }
        let mut actual: Vec<Row> = rows.into_iter().map(|(_, v)| v).collect();
        if !ordered {
            actual.sort();
            expected.sort();
        }
        if actual != expected {
            let show = |rows: &[Row]| -> String {
                rows.iter()
                    .map(|r| {
                        let cells: Vec<String> = r
                            .iter()
                            .enumerate()
                            .map(|(i, v)| types.get(i).copied().unwrap_or(Ty::Blob).show(v))
                            .collect();
                        format!("  ({})", cells.join(", "))
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            return Err(self.fail(format!(
                "{query}\nanswered {} rows:\n{}\nthe model expects {}:\n{}",
                actual.len(),
                show(&actual),
                expected.len(),
                show(&expected)
            )));
        }
        Ok(())
    }

    pub(crate) fn expect_count(&mut self, query: &str, n: usize) -> Result<(), TestCaseError> {
        self.expect(query, &["count".to_string()], &[Ty::Bigint], vec![vec![Some(bigint(n as i64))]], true)
    }

    /// The whole partition, its count, and (with clustering columns) the reversed order.
    pub(crate) fn check_partition(&mut self, pk: &[V]) -> Result<(), TestCaseError> {
        let s = self.schema().clone();
        let table = self.table.clone();
        let names = s.names();
        let types = s.types();
        let rows: Vec<Row> = self.model.rows(pk).into_iter().map(|(_, r)| r).collect();
        let filter = s.where_clause(pk, &[]);
        self.expect(&format!("SELECT * FROM {KS}.{table} WHERE {filter}"), &names, &types, rows.clone(), true)?;
        self.expect_count(&format!("SELECT COUNT(*) FROM {KS}.{table} WHERE {filter}"), rows.len())?;
        if let Some((_, desc)) = s.ck.first() {
            let reversed = if *desc { "ASC" } else { "DESC" };
            let mut backwards = rows;
            backwards.reverse();
            let query = format!("SELECT * FROM {KS}.{table} WHERE {filter} ORDER BY ck0 {reversed}");
            self.expect(&query, &names, &types, backwards, true)?;
        }
        Ok(())
    }

    pub(crate) fn check_probe(&mut self, pk: &[V], probe: &Probe) -> Result<(), TestCaseError> {
        let s = self.schema().clone();
        let lists: Vec<Vec<V>> = pk
            .iter()
            .zip(&probe.others)
            .map(|(v, others)| std::iter::once(v).chain(others).cloned().collect())
            .collect();
        let partitions = s.partitions_of(&lists);
        let mut clauses = vec![s.partitions_clause(&lists)];
        clauses.extend(probe.slice.clauses(&s));
        let clauses = clauses.join(" AND ");
        let mut rows: Vec<(Vec<V>, Row)> = partitions.iter().flat_map(|p| self.model.rows(p)).collect();
        rows.retain(|(ck, _)| probe.slice.matches(&s, ck));
        self.expect_count(&format!("SELECT COUNT(*) FROM {KS}.{} WHERE {clauses}", self.table), rows.len())?;

        let (mut names, mut types) = (s.names(), s.types());
        let mut rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
        let mut selection = "*".to_string();
        if let Some(columns) = &probe.columns {
            names = columns.iter().map(|i| names[*i].clone()).collect();
            types = columns.iter().map(|i| types[*i]).collect();
            rows = rows.into_iter().map(|r| columns.iter().map(|i| r[*i].clone()).collect()).collect();
            selection = names.join(", ");
        }
        let mut query = format!("SELECT {selection} FROM {KS}.{} WHERE {clauses}", self.table);
        // ORDER BY over several partitions sorts rows of equal clustering in an order 3.11
        // does not promise: asked of one partition only.
        let one_partition = partitions.len() == 1;
        if let Some((reversed, every_column)) = probe.order.filter(|_| one_partition) {
            let columns = if every_column { s.ck.len() } else { 1 };
            let order: Vec<String> = s.ck[..columns]
                .iter()
                .enumerate()
                .map(|(i, (_, desc))| format!("ck{i} {}", if desc != &reversed { "DESC" } else { "ASC" }))
                .collect();
            query.push_str(&format!(" ORDER BY {}", order.join(", ")));
            if reversed {
                rows.reverse();
            }
        }
        if let Some(n) = probe.limit {
            query.push_str(&format!(" LIMIT {n}"));
            rows.truncate(n as usize);
        }
        self.expect(&query, &names, &types, rows, true)
    }

    /// The whole table, as a multiset (partitions come in token order), its count, and with
    /// `limit`, that many of its rows (any of them).
    pub(crate) fn check_table(&mut self, limit: Option<u32>) -> Result<(), TestCaseError> {
        let s = self.schema().clone();
        let all = self.model.all_rows();
        let n = all.len();
        self.expect(&format!("SELECT * FROM {KS}.{}", self.table), &s.names(), &s.types(), all.clone(), false)?;
        self.expect_count(&format!("SELECT COUNT(*) FROM {KS}.{}", self.table), n)?;
        let key_names: Vec<String> = (0..s.pk.len()).map(|i| format!("pk{i}")).collect();
        let live: Vec<Row> = self
            .model
            .partitions
            .keys()
            .filter(|pk| !self.model.rows(pk).is_empty())
            .map(|pk| pk.iter().cloned().map(Some).collect())
            .collect();
        let query = format!("SELECT DISTINCT {} FROM {KS}.{}", key_names.join(", "), self.table);
        self.expect(&query, &key_names, &s.pk, live, false)?;
        let Some(limit) = limit else { return Ok(()) };
        let query = format!("SELECT * FROM {KS}.{} LIMIT {limit}", self.table);
        READS.fetch_add(1, AtomicOrdering::Relaxed);
        let answer = cql(&mut self.c, &query).map_err(|e| self.fail(format!("{query}\nfailed: {e:?}")))?;
        let rows = result_rows(&answer).map_err(|e| self.fail(format!("{query}\n{e}")))?;
        let mut left = all;
        for (names, row) in &rows {
            if names != &s.names() {
                return Err(self.fail(format!("{query}\ncolumns {names:?}, expected {:?}", s.names())));
            }
            match left.iter().position(|r| r == row) {
                Some(i) => {
                    left.swap_remove(i);
                }
                None => return Err(self.fail(format!("{query}\nanswered a row the model does not have: {row:?}"))),
            }
        }
        if rows.len() != n.min(limit as usize) {
            return Err(self.fail(format!("{query}\nanswered {} rows of {n}", rows.len())));
        }
        Ok(())
    }

    pub(crate) fn check_everything(&mut self) -> Result<(), TestCaseError> {
        for pk in self.schema().all_partitions() {
            self.check_partition(&pk)?;
        }
        self.check_table(None)
    }

    pub(crate) fn flush(&mut self, compact: bool) -> Result<(), TestCaseError> {
        self.tool("flush")?;
        if compact {
            self.tool("compact")?;
        }
        self.check_everything()
    }
}
