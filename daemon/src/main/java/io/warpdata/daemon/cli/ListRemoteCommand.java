package io.warpdata.daemon.cli;

import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.daemon.inspect.TextTable;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.VersionHash;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code warpctl list-remote [WS/ | WS/NAME[@REF]]}: workspaces, the datasets of one workspace, the
 * versions of one dataset with their dates and names (latest, tags, branches), or the one version
 * REF names.
 */
@Command(name = "list-remote", description = "Workspaces in the store, datasets of WS/ with their latest version,"
        + " the versions, tags and branches of WS/NAME, or the version WS/NAME@REF names.")
final class ListRemoteCommand implements Callable<Integer> {
    @ParentCommand
    WarpctlCommand root;

    @Parameters(index = "0", arity = "0..1", paramLabel = "WS/[NAME[@REF]]",
            description = "A workspace, a dataset, or one version of it (default: list workspaces).")
    String workspace;

    @Override
    public Integer call() {
        try (Remote remote = root.openRemote()) {
            if (workspace == null) {
                List<String> ws = remote.catalog().workspaces();
                if (root.json) {
                    root.printJson(Map.of("workspaces", ws));
                } else {
                    ws.forEach(w -> root.context.out().println(w + "/"));
                }
                return 0;
            }
            int slash = workspace.indexOf('/');
            if (slash > 0 && slash < workspace.length() - 1) {
                io.warpdata.manifest.DatasetRef ref = WarpctlCommand.datasetRef(workspace);
                // WS/NAME@REF lists the one version REF names (a tag, a branch, latest, a prefix).
                versions(remote, ref.id(), workspace.contains("@")
                        ? Optional.of(remote.catalog().locate(ref).version()) : Optional.empty());
                return 0;
            }
            String ws = workspace.endsWith("/") ? workspace.substring(0, workspace.length() - 1) : workspace;
            if (!ws.matches("^[a-z0-9_-]+$")) {
                throw new UsageException("'" + workspace + "' is not a workspace",
                        "Name a workspace like 'vision/' (lowercase letters, digits, '_', '-').");
            }
            List<Object> json = new ArrayList<>();
            TextTable text = new TextTable(List.of("DATASET", "LATEST", "VERSIONS"));
            for (DatasetId id : remote.catalog().datasets(ws)) {
                Optional<VersionHash> latest = remote.catalog().latest(id);
                int versions = remote.catalog().versions(id).size();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("dataset", id.toString());
                m.put("latest", latest.map(VersionHash::hex).orElse(null));
                m.put("versions", versions);
                json.add(m);
                text.add(List.of(id.toString(), latest.map(v -> v.shortHex(12)).orElse("-"), Integer.toString(versions)));
            }
            if (root.json) {
                root.printJson(Map.of("workspace", ws, "datasets", json));
            } else {
                root.context.out().print(text.render(true));
            }
        }
        return 0;
    }

    /** Every version of {@code id} (or {@code only} that one), newest first, with its date and the names it goes by. */
    private void versions(Remote remote, DatasetId id, Optional<VersionHash> only) {
        Catalog catalog = remote.catalog();
        List<VersionHash> versions = only.map(List::of).orElseGet(() -> catalog.versions(id));
        if (versions.isEmpty()) {
            throw new DatasetNotFoundException("A version of " + id, remote.store.describe(),
                    catalog.datasets(id.workspace()).stream().map(DatasetId::toString).limit(20).toList());
        }
        RefNames names = RefNames.of(catalog, id);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (VersionHash v : versions) {
            Manifest m = catalog.manifest(id, v);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("version", v.hex());
            row.put("created_at", m.metadata().get("created_at"));
            row.put("names", names.of(v));
            m.derivedFrom().ifPresent(d -> row.put("derived_from", d.parent() + "@" + d.parentVersion().hex()));
            rows.add(row);
        }
        rows.sort(Comparator.comparing((Map<String, Object> r) -> String.valueOf(r.get("created_at"))).reversed());
        if (root.json) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("dataset", id.toString());
            out.putAll(names.json());
            out.put("versions", rows);
            root.printJson(out);
            return;
        }
        TextTable text = new TextTable(List.of("VERSION", "CREATED", "NAMES", "DERIVED FROM"));
        for (Map<String, Object> r : rows) {
            @SuppressWarnings("unchecked")
            List<String> n = (List<String>) r.get("names");
            String derived = (String) r.get("derived_from");
            text.add(List.of(((String) r.get("version")).substring(0, 12), String.valueOf(r.getOrDefault("created_at", "?")),
                    n.isEmpty() ? "-" : String.join(", ", n), derived == null ? "-" : derived.substring(0, derived.indexOf('@') + 13)));
        }
        root.context.out().print(text.render(true));
    }
}
