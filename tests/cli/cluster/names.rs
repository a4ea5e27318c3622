//! Names in a deployment of several partitions: a page named by its file (`index` of
//! `a/index.html`) whose name an earlier page of another file holds is `index~2`, as on
//! one node, whichever partition holds the earlier page.

use super::{assert_equal, cluster_of, single_of, with_config};

#[test]
fn pages_sharing_a_file_name_are_named_as_on_one_node_across_partitions() {
    let (tmp, config) = with_config();
    let site = tmp.path().join("site");
    for (i, folder) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        std::fs::create_dir_all(site.join(folder)).unwrap();
        for page in ["index", "intro"] {
            let text = format!(
                "<html><body><p>The {page} of part {folder}: the council met on day {i} about the river bridge.</p></body></html>"
            );
            std::fs::write(site.join(folder).join(format!("{page}.html")), text).unwrap();
        }
    }
    let files = [site];
    let one = single_of(tmp.path(), &config, &files, &[]);
    let names: Vec<&str> = one.0.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"index~5") && names.contains(&"intro~3"), "{names:?}");
    for partitions in ["2", "3"] {
        let c =
            cluster_of(tmp.path(), &config, &files, &["--shards", "1", "--partitions", partitions, "--servers", "1"]);
        assert_equal(&one, &c, &format!("{partitions} partitions"));
    }
}
