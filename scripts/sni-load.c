// sni-load: HTTPS load spread over many host names, for scripts/bench-scale.
//
// A keep-alive connection carries one SNI for its whole life (and a server may answer 421 when Host names
// another configured domain), so wrk, which sends one SNI for all its connections, cannot spread HTTPS
// over domains. This client gives every connection the next host name of the list (round robin over all
// threads) as both SNI and Host, makes a full TLS handshake (or, with RESUME 1, resumes the session of the
// thread's previous connection when it was for the same host: TLS 1.3 tickets), sends N keep-alive
// requests (the last with `Connection: close`), closes, and starts over. N = 1 measures handshakes; a larger N mostly requests.
// Each connection checks that the certificate presented covers its host name (no signature checks, like wrk).
//
// Build: cc -O2 -o sni-load sni-load.c -lssl -lcrypto -lpthread
// Usage: sni-load ADDRESS PORT HOSTS_FILE PATH CONNECTIONS SECONDS REQUESTS_PER_CONNECTION [RESUME]
// Prints one line: connections=… requests=… seconds=… rps=… cps=… non2xx=… errors=… wrongcert=… p50ms=… p99ms=…
// resumed=… (percentiles of the time per connection, from connect to its last response; resumed connections).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in server;
static char **hosts;
static size_t host_count;
static const char *path;
static int requests_per_connection;
static int resume;
static double deadline;
static SSL_CTX *context;
static atomic_size_t next_host;
static atomic_long connections, requests, non2xx, errors, wrongcert, resumed;

// Durations of the connections that completed (connect to last response, in seconds), for percentiles.
static pthread_mutex_t durations_lock = PTHREAD_MUTEX_INITIALIZER;
static double *durations;
static size_t duration_count, duration_capacity;

static void record_duration(double seconds) {
    pthread_mutex_lock(&durations_lock);
    if (duration_count == duration_capacity) {
        duration_capacity = duration_capacity ? duration_capacity * 2 : 65536;
        durations = realloc(durations, duration_capacity * sizeof *durations);
    }
    durations[duration_count++] = seconds;
    pthread_mutex_unlock(&durations_lock);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double p) {
    if (duration_count == 0) return 0;
    size_t index = (size_t)(p / 100.0 * (double)(duration_count - 1) + 0.5);
    return durations[index];
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

// Reads one response; returns its status, or -1 on an error. Handles Content-Length bodies only
// (every response aasa-server and nginx send here has one).
static int read_response(SSL *ssl, char *buffer, size_t size) {
    size_t used = 0;
    char *end = NULL;
    while (!(end = memmem(buffer, used, "\r\n\r\n", 4))) {
        if (used == size) return -1;
        int n = SSL_read(ssl, buffer + used, (int)(size - used));
        if (n <= 0) return -1;
        used += (size_t)n;
    }
    int status = 0;
    if (sscanf(buffer, "HTTP/1.%*d %d", &status) != 1) return -1;
    long length = 0;
    for (char *line = strstr(buffer, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Content-Length:", 15) == 0) length = strtol(line + 17, NULL, 10);
    }
    long remaining = length - (long)(used - (size_t)(end + 4 - buffer));
    while (remaining > 0) {
        int n = SSL_read(ssl, buffer, (int)(remaining < (long)size ? remaining : (long)size));
        if (n <= 0) return -1;
        remaining -= n;
    }
    return status;
}

static void *worker(void *unused) {
    (void)unused;
    char buffer[65536], request[1024];
    // The session of this thread's last connection, and its host: what RESUME offers the next one.
    SSL_SESSION *session = NULL;
    const char *session_host = NULL;
    while (now() < deadline) {
        const char *host = hosts[atomic_fetch_add(&next_host, 1) % host_count];
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct timeval timeout = {5, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        SSL *ssl = NULL;
        double started = now();
        if (connect(fd, (struct sockaddr *)&server, sizeof server) != 0) goto failed;
        ssl = SSL_new(context);
        SSL_set_tlsext_host_name(ssl, host);
        SSL_set_fd(ssl, fd);
        if (resume && session && session_host == host) SSL_set_session(ssl, session);
        if (SSL_connect(ssl) != 1) goto failed;
        if (SSL_session_reused(ssl)) {
            atomic_fetch_add(&resumed, 1);
        } else {
            // A resumed session presents no certificate; a full handshake's must cover the host.
            X509 *peer = SSL_get1_peer_certificate(ssl);
            if (!peer || X509_check_host(peer, host, 0, 0, NULL) != 1) atomic_fetch_add(&wrongcert, 1);
            X509_free(peer);
        }
        atomic_fetch_add(&connections, 1);
        int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host);
        // The last request of a connection says so, and the server closes it, as wrk -H 'Connection: close' does.
        char last[1024];
        int lastLength =
            snprintf(last, sizeof last, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host);
        for (int i = 0; i < requests_per_connection && now() < deadline; i++) {
            int final = i == requests_per_connection - 1;
            if (SSL_write(ssl, final ? last : request, final ? lastLength : length) != (final ? lastLength : length))
                goto failed;
            int status = read_response(ssl, buffer, sizeof buffer);
            if (status < 0) goto failed;
            atomic_fetch_add(&requests, 1);
            if (status < 200 || status > 399) atomic_fetch_add(&non2xx, 1);
        }
        record_duration(now() - started);
        // A session freed without a shutdown is marked not resumable; the server has sent its close_notify.
        SSL_shutdown(ssl);
        if (resume) {  // the ticket came before the responses (TLS 1.3 sends it after the handshake)
            SSL_SESSION *next = SSL_get1_session(ssl);
            if (next) {
                SSL_SESSION_free(session);
                session = next;
                session_host = host;
            }
        }
        SSL_free(ssl);
        close(fd);
        continue;
    failed:
        atomic_fetch_add(&errors, 1);
        ERR_clear_error();
        if (ssl) SSL_free(ssl);
        close(fd);
    }
    SSL_SESSION_free(session);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 8 && argc != 9) {
        fprintf(stderr, "usage: %s ADDRESS PORT HOSTS_FILE PATH CONNECTIONS SECONDS REQUESTS_PER_CONNECTION [RESUME]\n",
                argv[0]);
        return 2;
    }
    server.sin_family = AF_INET;
    server.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &server.sin_addr) != 1) return 2;
    FILE *file = fopen(argv[3], "r");
    if (!file) return 2;
    char line[512];
    size_t capacity = 1024;
    hosts = malloc(capacity * sizeof *hosts);
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line) continue;
        if (host_count == capacity) hosts = realloc(hosts, (capacity *= 2) * sizeof *hosts);
        hosts[host_count++] = strdup(line);
    }
    fclose(file);
    if (host_count == 0) return 2;
    path = argv[4];
    int threads = atoi(argv[5]);
    double seconds = atof(argv[6]);
    requests_per_connection = atoi(argv[7]);
    resume = argc == 9 && atoi(argv[8]) == 1;
    context = SSL_CTX_new(TLS_client_method());
    // Resuming, OpenSSL must keep the tickets a TLS 1.3 server sends after the handshake (in the connection's
    // session, not in a cache of its own); otherwise no session is kept at all.
    SSL_CTX_set_session_cache_mode(
        context, resume ? SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE : SSL_SESS_CACHE_OFF);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    double start = now();
    deadline = start + seconds;
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    double elapsed = now() - start;
    qsort(durations, duration_count, sizeof *durations, compare_doubles);
    printf("connections=%ld requests=%ld seconds=%.3f rps=%.1f cps=%.1f non2xx=%ld errors=%ld wrongcert=%ld "
           "p50ms=%.2f p99ms=%.2f resumed=%ld\n",
           connections, requests, elapsed, requests / elapsed, connections / elapsed, non2xx, errors, wrongcert,
           percentile(50) * 1000, percentile(99) * 1000, resumed);
    return 0;
}
