package io.warpdata.daemon.cli;

import io.warpdata.catalog.RefNames;
import com.fasterxml.jackson.annotation.JsonInclude;
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
                } else if (ws.isEmpty()) {
                    root.context.err().println("warpctl: " + remote.store.describe() + " holds no dataset yet"
                            + " (warpctl publish WS/NAME ... puts one there)");
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
            List<DatasetId> datasets = remote.catalog().datasets(ws);
            List<String> refused = datasets.isEmpty() ? remote.catalog().refusedOldNames(ws) : List.of();
            if (!refused.isEmpty()) {
                throw new DatasetNotFoundException("Workspace " + ws + "/ of " + remote.store.describe() + " holds "
                        + refused.size() + " dataset(s) an older Warp published under names this one refuses (starting"
                        + " with '-', or longer than " + DatasetId.MAX_NAME + " characters: " + String.join(", ",
                        refused.stream().limit(5).map(n -> n.length() > 40 ? n.substring(0, 32) + "..." : n).toList())
                        + "), and no other", "Read them with the Warp release that published them and publish them"
                        + " again under valid names (README, \"Upgrading\").");
            }
            if (datasets.isEmpty()) {
                // A workspace is only its datasets: none means none is published there (or a typo).
                throw new DatasetNotFoundException("Workspace " + ws + "/", remote.store.describe(),
                        remote.catalog().workspaces().stream().map(w -> w + "/").limit(20).toList());
            }
            List<DatasetSummary> json = new ArrayList<>();
            TextTable text = new TextTable(List.of("DATASET", "LATEST", "VERSIONS"));
            // Every dataset's latest and versions listing at once (one round trip deep, not one per dataset).
            remote.catalog().prefetch(datasets);
            for (DatasetId id : datasets) {
                Optional<VersionHash> latest = remote.catalog().latest(id);
                int versions = remote.catalog().versions(id).size();
                json.add(new DatasetSummary(id.toString(), latest.map(VersionHash::hex).orElse(null), versions));
                text.add(List.of(id.toString(), latest.map(v -> v.shortHex(12)).orElse("-"), Integer.toString(versions)));
            }
            if (root.json) {
                root.printJson(new WorkspaceListing(ws, json));
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
            // The workspace's datasets, or else the store's workspaces: "nothing is published there" only
            // of an empty store (audit 32 said it of a store with 4 workspaces).
            List<String> existing = catalog.datasets(id.workspace()).stream().map(DatasetId::toString).limit(20).toList();
            throw new DatasetNotFoundException("A version of " + id, remote.store.describe(), existing.isEmpty()
                    ? catalog.workspaces().stream().map(w -> w + "/").limit(20).toList() : existing);
        }
        RefNames names = RefNames.of(catalog, id);
        List<VersionRow> rows = new ArrayList<>();
        // A version a newer Warp published is listed, not fatal: the others stay readable here.
        List<Optional<Manifest>> manifests = inParallel(versions, v -> {
            try {
                return Optional.of(catalog.manifest(id, v));
            } catch (io.warpdata.manifest.ManifestFormatTooNewException tooNew) {
                return Optional.<Manifest>empty();
            }
        });
        int tooNew = 0;
        for (int i = 0; i < versions.size(); i++) {
            VersionHash v = versions.get(i);
            Optional<Manifest> m = manifests.get(i);
            tooNew += m.isEmpty() ? 1 : 0;
            rows.add(new VersionRow(v.hex(), m.map(x -> x.metadata().get(CREATED_AT)).orElse(null), names.of(v),
                    m.flatMap(Manifest::derivedFrom).map(d -> d.parent() + "@" + d.parentVersion().hex()).orElse(null)));
        }
        if (tooNew > 0) {
            root.context.err().println("warpctl: " + tooNew + " version(s) of " + id + " were published by a newer Warp"
                    + " (CREATED ?): upgrade Warp to read them (README, \"Upgrading\")");
        }
        rows.sort(Comparator.comparing((VersionRow r) -> String.valueOf(r.createdAt())).reversed());
        if (root.json) {
            RefNames.Json refs = names.json();
            root.printJson(new VersionListing(id.toString(), refs.latest(), refs.tags(), refs.branches(), rows));
            return;
        }
        TextTable text = new TextTable(List.of("VERSION", "CREATED", "NAMES", "DERIVED FROM"));
        for (VersionRow r : rows) {
            String derived = r.derivedFrom();
            text.add(List.of(r.version().substring(0, 12), r.createdAt() == null ? "?" : String.valueOf(r.createdAt()),
                    r.names().isEmpty() ? "-" : String.join(", ", r.names()),
                    derived == null ? "-" : derived.substring(0, derived.indexOf('@') + 13)));
        }
        root.context.out().print(text.render(true));
    }

    /** Requests to the store at once when listing versions: a 300-version dataset took 3.3 s one by one on loopback. */
    static final int FETCHES_AT_ONCE = 16;

    /** {@code f} of each item, {@link #FETCHES_AT_ONCE} at a time, in the items' order; the first failure is thrown. */
    static <T, R> List<R> inParallel(List<T> items, java.util.function.Function<T, R> f) {
        if (items.size() < 2) {
            return items.stream().map(f).toList();
        }
        try (java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
                FETCHES_AT_ONCE, Thread.ofVirtual().factory())) {
            List<R> out = new ArrayList<>(items.size());
            for (java.util.concurrent.Future<R> done : pool.invokeAll(items.stream()
                    .map(item -> (java.util.concurrent.Callable<R>) () -> f.apply(item)).toList())) {
                out.add(done.get());
            }
            return out;
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.util.concurrent.CancellationException("interrupted while listing versions");
        }
    }

    /** The manifest metadata key a version's creation time is under (ManifestCodec, the writers). */
    private static final String CREATED_AT = "created_at";
    /** {@code warpctl list-remote WORKSPACE/ --json}. */
    record WorkspaceListing(String workspace, List<DatasetSummary> datasets) {
    }

    record DatasetSummary(String dataset, String latest, int versions) {
    }

    /** {@code warpctl list-remote DATASET --json}: the names, then every version, newest first. */
    record VersionListing(String dataset, String latest, Map<String, String> tags, Map<String, String> branches,
                          List<VersionRow> versions) {
    }

    /** @param derivedFrom {@code parent@version} of a view; absent for a published version */
    record VersionRow(String version, Object createdAt, List<String> names,
                      @JsonInclude(JsonInclude.Include.NON_NULL) String derivedFrom) {
    }
}
