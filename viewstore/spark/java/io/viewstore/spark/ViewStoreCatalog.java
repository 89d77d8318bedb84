package io.viewstore.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.NoSuchViewException;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.analysis.ViewAlreadyExistsException;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.PlanExpression;
import org.apache.spark.sql.catalyst.plans.QueryPlan;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.View;
import org.apache.spark.sql.connector.catalog.ViewCatalog;
import org.apache.spark.sql.execution.command.ViewHelper$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark {@link ViewCatalog} whose views live in a viewstore (an event-sourced SQLite catalog).
 *
 * <p>The class holds no state of its own: every call becomes one JSON request to the
 * {@link ViewStoreBridge} that {@code viewstore.spark.attach} connects to this instance, and the
 * answer becomes a {@link View} or an {@link AnalysisException}. Register it with
 * {@code spark.sql.catalog.<name>=io.viewstore.spark.ViewStoreCatalog}.
 */
public class ViewStoreCatalog implements ViewCatalog {
    private static final ObjectMapper JSON = new ObjectMapper();

    private String catalogName;
    private volatile ViewStoreBridge bridge;
    /** The views loadView served on each thread (a few), to tell a new definition from a loaded one. */
    private final ThreadLocal<Map<Identifier, View>> served = ThreadLocal.withInitial(() ->
            new LinkedHashMap<Identifier, View>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Identifier, View> eldest) {
                    return size() > 64;
                }
            });

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        this.catalogName = name;
    }

    @Override
    public String name() {
        return catalogName;
    }

    /** Connects this catalog instance to a store; later calls go to {@code target}. */
    public void attach(ViewStoreBridge target) {
        this.bridge = target;
    }

    /** Disconnects the store; later calls fail with a message saying how to attach one. */
    public void detach() {
        this.bridge = null;
    }

    /** Whether a store is attached. */
    public boolean isAttached() {
        return bridge != null;
    }

    // -- ViewCatalog -------------------------------------------------------------------------

    @Override
    public Identifier[] listViews(String[] namespace) {
        ObjectNode request = JSON.createObjectNode();
        request.set("namespace", strings(namespace));
        JsonNode found = call("listViews", request);
        Identifier[] result = new Identifier[found.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = identifier(found.get(i));
        }
        return result;
    }

    @Override
    public View loadView(Identifier ident) {
        View loaded = view(call("loadView", request(ident)));
        served.get().put(ident, loaded);
        return loaded;
    }

    @Override
    public boolean viewExists(Identifier ident) {
        return call("viewExists", request(ident)).asBoolean();
    }

    @Override
    public View createView(Identifier ident, View view) {
        checkReferences(ident, view);
        return view(call("createView", request(ident, view)));
    }

    @Override
    public View replaceView(Identifier ident, View view) {
        // ALTER VIEW ... SET/UNSET TBLPROPERTIES and WITH SCHEMA send back the query loaded, which
        // was made in another context than this session's: only a new query is checked
        View loaded = served.get().remove(ident);
        if (loaded == null || !sameQuery(loaded, view)) {
            checkReferences(ident, view);
        }
        return view(call("replaceView", request(ident, view)));
    }

    @Override
    public View createOrReplaceView(Identifier ident, View view) {
        checkReferences(ident, view);
        return view(call("createOrReplaceView", request(ident, view)));
    }

    @Override
    public boolean dropView(Identifier ident) {
        return call("dropView", request(ident)).asBoolean();
    }

    @Override
    public void renameView(Identifier oldIdent, Identifier newIdent) {
        ObjectNode request = request(oldIdent);
        request.set("target", json(newIdent));
        call("renameView", request);
    }

    // -- what a new definition may read ---------------------------------------------------------

    /**
     * Refuses a new definition that reads a temporary object, that has an expression without an alias
     * or that reads, through any catalog, the view itself, with Spark's own errors
     * ({@code INVALID_TEMP_OBJ_REFERENCE}, {@code CREATE_PERMANENT_VIEW_WITHOUT_ALIAS}, {@code RECURSIVE_VIEW}).
     *
     * <p>Spark checks these for views of a catalog only in sessions built without Hive support (the
     * rule is missing from the Hive session's analyzer), so here the query is analysed again, in the
     * session and context of the statement (its current catalog and namespace, which the definition
     * records), before anything is written.
     */
    private void checkReferences(Identifier ident, View view) {
        SparkSession session = SparkSession.active();
        LogicalPlan parsed;
        try {
            parsed = session.sessionState().sqlParser().parsePlan(view.queryText());
        } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {  // Spark parsed it once already
            throw raise(e);
        }
        LogicalPlan analyzed = session.sessionState()
                .executePlan(parsed, session.sessionState().executePlan$default$2()).analyzed();
        List<String> name = new ArrayList<>();
        name.add(catalogName);
        name.addAll(Arrays.asList(ident.namespace()));
        name.add(ident.name());
        Set<String> functions = new LinkedHashSet<>();
        temporaryFunctions(parsed, session.sessionState().catalog(), functions);
        ViewHelper$.MODULE$.verifyTemporaryObjectsNotExists(false, seq(name), analyzed, seq(new ArrayList<>(functions)));
        // a name Spark made up for an expression ("(1 + 1)") may change with the release: not a column to keep
        ViewHelper$.MODULE$.verifyAutoGeneratedAliasesNotExists(analyzed, false, seq(name));
        List<List<String>> path = new ArrayList<>();
        path.add(name);
        checkCycle(analyzed, path, name);
    }

    /** The temporary functions a parsed query names (Spark's analyzer keeps no record of them for us). */
    private static void temporaryFunctions(QueryPlan<?> plan, SessionCatalog catalog, Set<String> found) {
        for (Expression expression : list(plan.expressions())) {
            temporaryFunctions(expression, catalog, found);
        }
        for (Object child : list(plan.children())) {
            temporaryFunctions((QueryPlan<?>) child, catalog, found);
        }
        for (QueryPlan<?> inner : list(plan.innerChildren())) {
            temporaryFunctions(inner, catalog, found);
        }
    }

    private static void temporaryFunctions(Expression expression, SessionCatalog catalog, Set<String> found) {
        if (expression instanceof UnresolvedFunction function) {
            List<String> parts = list(function.nameParts());
            int size = parts.size();
            boolean session = size == 1 || (size == 2 && parts.get(0).equalsIgnoreCase("session"))
                    || (size == 3 && parts.get(0).equalsIgnoreCase("system") && parts.get(1).equalsIgnoreCase("session"));
            if (session && catalog.isTemporaryFunction(FunctionIdentifier.apply(parts.get(size - 1)))) {
                found.add(parts.get(size - 1));
            }
        }
        if (expression instanceof PlanExpression<?> subquery) {
            temporaryFunctions(subquery.plan(), catalog, found);
        }
        for (Expression child : list(expression.children())) {
            temporaryFunctions(child, catalog, found);
        }
    }

    /** Follows the views an analysed plan reads (of every catalog) and refuses a path back to {@code target}. */
    private static void checkCycle(LogicalPlan plan, List<List<String>> path, List<String> target) {
        List<List<String>> here = path;
        if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.View view && !view.isTempView()) {
            List<String> ident = list(view.desc().fullIdent());
            here = new ArrayList<>(path);
            here.add(ident);
            if (lower(ident).equals(lower(target))) {
                List<String> steps = new ArrayList<>();
                for (List<String> step : here) {
                    steps.add(quoted(step));
                }
                throw raise(new AnalysisException("RECURSIVE_VIEW", new scala.collection.immutable.Map.Map2<>(
                        "viewIdent", quoted(target), "newPath", String.join(" -> ", steps))));
            }
        }
        for (LogicalPlan child : list(plan.children())) {
            checkCycle(child, here, target);
        }
        for (Expression expression : list(plan.expressions())) {
            checkCycle(expression, here, target);
        }
    }

    private static void checkCycle(Expression expression, List<List<String>> path, List<String> target) {
        if (expression instanceof PlanExpression<?> subquery && subquery.plan() instanceof LogicalPlan plan) {
            checkCycle(plan, path, target);
        }
        for (Expression child : list(expression.children())) {
            checkCycle(child, path, target);
        }
    }

    private static List<String> lower(List<String> parts) {
        List<String> result = new ArrayList<>();
        for (String part : parts) {
            result.add(part.toLowerCase(Locale.ROOT));
        }
        return result;
    }

    private static String quoted(List<String> parts) {
        List<String> result = new ArrayList<>();
        for (String part : parts) {
            result.add("`" + part.replace("`", "``") + "`");
        }
        return String.join(".", result);
    }

    private static boolean sameQuery(View a, View b) {
        return a.queryText().equals(b.queryText()) && java.util.Objects.equals(a.currentCatalog(), b.currentCatalog())
                && Arrays.equals(a.currentNamespace(), b.currentNamespace());
    }

    private static <T> List<T> list(scala.collection.Iterable<T> values) {
        return new ArrayList<>(scala.jdk.javaapi.CollectionConverters.asJavaCollection(values));
    }

    private static <T> scala.collection.immutable.Seq<T> seq(List<T> values) {
        return scala.jdk.javaapi.CollectionConverters.asScala(values).toList();
    }

    // -- the bridge --------------------------------------------------------------------------

    private JsonNode call(String operation, ObjectNode request) {
        ViewStoreBridge target = bridge;
        if (target == null) {
            throw raise(userError("viewstore catalog '" + catalogName + "' has no store attached: call "
                    + "viewstore.spark.attach(spark, store, name='" + catalogName + "') first"));
        }
        // Spark reads a view and then replaces it on the same thread: the thread lets the store
        // check that nothing changed in between.
        request.put("thread", Thread.currentThread().getId());
        // the store decides which catalog a view's unqualified names mean: it needs the session's catalogs
        request.set("catalogs", catalogs());
        String answer;
        try {
            answer = target.call(operation, JSON.writeValueAsString(request));
        } catch (JsonProcessingException e) {
            throw raise(userError("viewstore catalog '" + catalogName + "': cannot encode " + operation
                    + ": " + e.getOriginalMessage()));
        } catch (RuntimeException e) {  // py4j: the Python side raised (py4j logs its traceback) or is gone
            String why = e instanceof py4j.Py4JNetworkException ? "the connection to it is lost"
                    : "it failed; its log has the traceback";
            throw raise(userError("viewstore catalog '" + catalogName + "': " + operation
                    + " got no answer from the Python driver (" + why + ")"));
        }
        JsonNode reply;
        try {
            reply = JSON.readTree(answer);
        } catch (JsonProcessingException e) {
            throw raise(userError("viewstore catalog '" + catalogName + "': unreadable answer to " + operation));
        }
        JsonNode error = reply.get("error");
        if (error != null) {
            throw raise(translate(error));
        }
        return reply.get("ok");
    }

    /** The catalogs of the calling session: the session catalog and every {@code spark.sql.catalog.<name>}. */
    private static ArrayNode catalogs() {
        String prefix = "spark.sql.catalog.";
        ArrayNode names = JSON.createArrayNode();
        names.add("spark_catalog");
        for (String key : scala.jdk.javaapi.CollectionConverters.asJava(SQLConf.get().getAllConfs()).keySet()) {
            String name = key.startsWith(prefix) ? key.substring(prefix.length()) : "";
            if (!name.isEmpty() && name.indexOf('.') < 0 && !name.equals("spark_catalog")) {
                names.add(name);
            }
        }
        return names;
    }

    /** Turns an error envelope into the Spark exception it names. */
    private AnalysisException translate(JsonNode error) {
        String kind = error.path("kind").asText("");
        switch (kind) {
            case "no_such_view":
                return new NoSuchViewException(identifier(error));
            case "view_already_exists":
                return new ViewAlreadyExistsException(identifier(error));
            case "recursive_view":
                return new AnalysisException("RECURSIVE_VIEW", new scala.collection.immutable.Map.Map2<>(
                        "viewIdent", error.path("view").asText(), "newPath", error.path("path").asText()));
            case "no_such_namespace":
                return new NoSuchNamespaceException(array(error.get("namespace")));
            default:
                return userError(error.path("message").asText("viewstore catalog '" + catalogName + "' failed"));
        }
    }

    private static AnalysisException userError(String message) {
        return new AnalysisException("USER_RAISED_EXCEPTION",
                new scala.collection.immutable.Map.Map1<>("errorMessage", message));
    }

    /** Throws a checked exception from a method that cannot declare it (Spark is written in Scala). */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException raise(Throwable error) throws T {
        throw (T) error;
    }

    // -- JSON --------------------------------------------------------------------------------

    private static ObjectNode request(Identifier ident) {
        ObjectNode request = JSON.createObjectNode();
        request.set("ident", json(ident));
        return request;
    }

    private static ObjectNode request(Identifier ident, View view) {
        ObjectNode request = request(ident);
        ObjectNode body = JSON.createObjectNode();
        body.put("queryText", view.queryText());
        body.put("currentCatalog", view.currentCatalog());
        body.set("currentNamespace", strings(view.currentNamespace()));
        body.put("schemaMode", view.schemaMode());
        body.set("queryColumnNames", strings(view.queryColumnNames()));
        body.set("properties", strings(view.properties()));
        body.set("sqlConfigs", strings(view.sqlConfigs()));
        try {
            body.set("schema", JSON.readTree(view.schema().json()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Spark wrote unreadable schema JSON", e);
        }
        request.set("view", body);
        return request;
    }

    private static ObjectNode json(Identifier ident) {
        ObjectNode node = JSON.createObjectNode();
        node.set("namespace", strings(ident.namespace()));
        node.put("name", ident.name());
        return node;
    }

    private static Identifier identifier(JsonNode node) {
        return Identifier.of(array(node.get("namespace")), node.path("name").asText());
    }

    private static View view(JsonNode node) {
        View.Builder builder = new View.Builder()
                .withQueryText(node.path("queryText").asText())
                .withCurrentCatalog(node.path("currentCatalog").asText(null))
                .withCurrentNamespace(array(node.get("currentNamespace")))
                .withSchemaMode(node.path("schemaMode").asText(null))
                .withQueryColumnNames(array(node.get("queryColumnNames")))
                .withSqlConfigs(map(node.get("sqlConfigs")));
        builder = builder.withSchema((StructType) DataType.fromJson(node.get("schema").toString()))
                .withProperties(map(node.get("properties")));
        return builder.build();
    }

    private static ArrayNode strings(String[] values) {
        ArrayNode array = JSON.createArrayNode();
        if (values != null) {
            for (String value : values) {
                array.add(value);
            }
        }
        return array;
    }

    private static ObjectNode strings(Map<String, String> values) {
        ObjectNode object = JSON.createObjectNode();
        if (values != null) {
            values.forEach(object::put);
        }
        return object;
    }

    private static String[] array(JsonNode node) {
        if (node == null || !node.isArray()) {
            return new String[0];
        }
        String[] result = new String[node.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = node.get(i).asText();
        }
        return result;
    }

    private static Map<String, String> map(JsonNode node) {
        Map<String, String> result = new LinkedHashMap<>();
        if (node != null && node.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> fields = node.properties().iterator();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                result.put(field.getKey(), field.getValue().asText());
            }
        }
        return result;
    }
}
