/* SPDX-License-Identifier: Apache-2.0 */
/* The little HTTP/1.1 that `fxprof open` needs: a request head (request line and header fields,
 * no body) parsed from one bounded buffer, and the responses built into another. Anything
 * outside that subset is refused with a status code, never guessed at. */
#include "fxprof.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* RFC 9110 tchar: what a method or a header name may contain. */
static bool is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* End of the head: just past the empty line; 0 if it has not arrived yet. Bare LF line ends
 * are accepted, as RFC 9112 §2.2 allows a recipient to. */
static size_t head_end(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] == '\n' && buf[i + 1] == '\n')
            return i + 2;
        if (buf[i] == '\n' && buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* One line starting at *p (within end), without its CR LF; advances *p past it. */
static size_t next_line(const char **p, const char *end, const char **line)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    const char *stop = nl ? nl : end;
    *line = *p;
    size_t n = (size_t)(stop - *p);
    if (n && (*p)[n - 1] == '\r')
        n--;
    *p = nl ? nl + 1 : end;
    return n;
}

static int request_line(const char *l, size_t n, struct fx_http_request *req)
{
    const char *sp1 = memchr(l, ' ', n);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(l + n - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || sp1 == l || (size_t)(sp1 - l) >= sizeof req->method)
        return FX_HTTP_BAD_REQUEST;
    for (const char *c = l; c < sp1; c++)
        if (!is_tchar(*c))
            return FX_HTTP_BAD_REQUEST;
    size_t tlen = (size_t)(sp2 - sp1 - 1);
    if (tlen == 0 || sp1[1] != '/')
        return FX_HTTP_BAD_REQUEST;
    if (tlen >= sizeof req->target)
        return FX_HTTP_URI_TOO_LONG;
    const char *ver = sp2 + 1;
    size_t vlen = (size_t)(l + n - ver);
    if (vlen != 8 || strncmp(ver, "HTTP/1.", 7) || (ver[7] != '0' && ver[7] != '1'))
        return vlen >= 5 && !strncmp(ver, "HTTP/", 5) ? FX_HTTP_VERSION : FX_HTTP_BAD_REQUEST;
    memcpy(req->method, l, (size_t)(sp1 - l));
    req->method[sp1 - l] = '\0';
    memcpy(req->target, sp1 + 1, tlen);
    req->target[tlen] = '\0';
    for (char *c = req->target; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            return FX_HTTP_BAD_REQUEST;
    req->target[strcspn(req->target, "?#")] = '\0'; /* the query plays no part in routing */
    return 0;
}

/* Keeps a value for echoing only if it is a plain list of header names. */
static void keep_list(char *dst, size_t cap, const char *v, size_t n)
{
    dst[0] = '\0';
    if (n >= cap)
        return;
    for (size_t i = 0; i < n; i++)
        if (!is_tchar(v[i]) && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
            return;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static bool named(const char *l, size_t nlen, const char *name)
{
    return strlen(name) == nlen && !strncasecmp(l, name, nlen);
}

static int header_field(const char *l, size_t n, struct fx_http_request *req)
{
    if (l[0] == ' ' || l[0] == '\t') /* obsolete line folding: RFC 9112 §5.2 says reject */
        return FX_HTTP_BAD_REQUEST;
    const char *colon = memchr(l, ':', n);
    if (!colon || colon == l)
        return FX_HTTP_BAD_REQUEST;
    size_t nlen = (size_t)(colon - l);
    for (size_t i = 0; i < nlen; i++)
        if (!is_tchar(l[i]))
            return FX_HTTP_BAD_REQUEST;
    const char *v = colon + 1, *end = l + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
    if (named(l, nlen, "content-length"))
        req->has_body |= !(vlen == 1 && v[0] == '0');
    else if (named(l, nlen, "transfer-encoding"))
        req->has_body = true;
    else if (named(l, nlen, "access-control-request-headers"))
        keep_list(req->request_headers, sizeof req->request_headers, v, vlen);
    else if (named(l, nlen, "access-control-request-private-network"))
        req->private_network = vlen == 4 && !strncasecmp(v, "true", 4);
    return 0;
}

int fx_http_parse(const char *buf, size_t len, size_t cap, struct fx_http_request *req)
{
    size_t end = head_end(buf, len);
    if (!end)
        return len >= cap ? FX_HTTP_TOO_LARGE : FX_HTTP_INCOMPLETE;
    memset(req, 0, sizeof *req);
    const char *p = buf, *stop = buf + end, *line;
    size_t n = next_line(&p, stop, &line);
    int status = request_line(line, n, req);
    while (!status && p < stop && (n = next_line(&p, stop, &line)) > 0)
        status = header_field(line, n, req);
    /* fxprof reads no bodies; a request with one would leave bytes it cannot frame. */
    if (!status && req->has_body)
        status = FX_HTTP_BAD_REQUEST;
    return status;
}

const char *fx_http_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 414:
        return "URI Too Long";
    case 431:
        return "Request Header Fields Too Large";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

/* Appends the strings (up to a NULL) to a fixed head buffer; once one does not fit, *ok turns
 * false and nothing more is written. */
static void put(char *out, size_t cap, size_t *len, bool *ok, const char *const parts[])
{
    for (int i = 0; *ok && parts[i]; i++) {
        size_t n = strlen(parts[i]);
        if (n >= cap - *len) {
            *ok = false;
            return;
        }
        memcpy(out + *len, parts[i], n + 1);
        *len += n;
    }
}

#define PUT(...) put(out, cap, &len, &ok, (const char *const[]){__VA_ARGS__, NULL})

size_t fx_http_head(const struct fx_http_response *res, char *out, size_t cap)
{
    char status[16], length[32];
    size_t len = 0;
    bool ok = cap > 0;
    snprintf(status, sizeof status, "%d", res->status);
    snprintf(length, sizeof length, "%lld", res->content_length);
    PUT("HTTP/1.1 ", status, " ", fx_http_reason(res->status), "\r\n");
    if (res->content_type)
        PUT("Content-Type: ", res->content_type, "\r\n");
    if (res->gzip)
        PUT("Content-Encoding: gzip\r\n");
    PUT("Content-Length: ", length, "\r\n");
    if (res->cors) {
        PUT("Access-Control-Allow-Origin: *\r\n");
        if (res->status == 204 || res->status == 405)
            PUT("Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n");
        if (res->allow_headers && *res->allow_headers)
            PUT("Access-Control-Allow-Headers: ", res->allow_headers, "\r\n");
        if (res->private_network) /* Chrome's Private Network Access preflight */
            PUT("Access-Control-Allow-Private-Network: true\r\n");
        if (res->status == 204)
            PUT("Access-Control-Max-Age: 600\r\n");
    }
    if (res->status == 405)
        PUT("Allow: GET, HEAD, OPTIONS\r\n");
    PUT("Cache-Control: no-store\r\nConnection: close\r\n\r\n");
    return ok ? len : 0;
}
