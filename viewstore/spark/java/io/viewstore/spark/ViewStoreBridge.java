package io.viewstore.spark;

/**
 * The Python side of a viewstore catalog, reached through py4j callbacks.
 *
 * <p>Every catalog operation is one call: the operation name and a JSON request go in, a JSON
 * envelope comes back, either {@code {"ok": value}} or {@code {"error": {...}}}. Keeping the
 * interface to strings keeps py4j out of the data model and lets the Python side answer errors
 * without raising across the bridge.
 */
public interface ViewStoreBridge {
    /**
     * Handles one catalog operation.
     *
     * @param operation the operation, e.g. {@code "loadView"}
     * @param request the arguments as a JSON object
     * @return the JSON envelope
     */
    String call(String operation, String request);
}
