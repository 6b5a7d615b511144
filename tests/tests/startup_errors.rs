//! A bad storage-conf.xml stops startup with exit status 1 and a message naming the file, the
//! element, its line and (for a typo) the nearest known element.

use std::process::Command;

use e2e::sibyl_bin;

fn start_with(xml: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("storage-conf.xml");
    std::fs::write(&conf, xml).expect("write conf");
    let out = Command::new(sibyl_bin()).arg("--config").arg(&conf).output().expect("run sibyl");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn conf(body: &str) -> String {
    format!(
        "<Storage>\n<ClusterName>T</ClusterName>\n<Partitioner>org.apache.cassandra.dht.RandomPartitioner</Partitioner>\n\
         <CommitLogDirectory>/tmp/x/c</CommitLogDirectory>\n<DataFileDirectories><DataFileDirectory>/tmp/x/d</DataFileDirectory></DataFileDirectories>\n\
         <Seeds><Seed>127.0.0.1</Seed></Seeds>\n{body}\n<Keyspaces/>\n</Storage>\n"
    )
}

#[test]
fn unknown_element_names_file_line_and_suggestion() {
    let (code, err) = start_with(&conf("<ThriftPrt>9160</ThriftPrt>"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("storage-conf.xml"), "{err}");
    assert!(err.contains("ThriftPrt") && err.contains("line 7") && err.contains("ThriftPort"), "{err}");
}

#[test]
fn bad_value_names_element_and_value() {
    let (code, err) = start_with(&conf("<ThriftPort>ninety</ThriftPort>"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("ThriftPort") && err.contains("ninety") && err.contains("line 7"), "{err}");
}

#[test]
fn missing_file_is_named() {
    let out = Command::new(sibyl_bin()).arg("--config").arg("/nonexistent/storage-conf.xml").output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/storage-conf.xml"));
}
