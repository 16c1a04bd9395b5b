/*
 * core/metrics.h: counters, gauges and histograms in the Prometheus text
 * format, written atomically to the --metrics file.
 */
#ifndef WA_CORE_METRICS_H
#define WA_CORE_METRICS_H

#include <pthread.h>

struct wa_metric;

void wa_metrics_open(const char *path);
/*
 * Labels on every series (besides program and wa_instance, the --metrics
 * file's name): --metrics-label NAME=VALUE (exits 64 on a bad one), or
 * one a program knows (campaign, number).
 */
void wa_metrics_label_option(const char *arg);
void wa_metrics_label(const char *name, const char *value);
/* labels: `code="131026"`, or NULL. */
struct wa_metric *wa_counter(const char *name, const char *labels,
    const char *help);
struct wa_metric *wa_gauge(const char *name, const char *labels,
    const char *help);
struct wa_metric *wa_histogram(const char *name, const char *labels,
    const char *help, const double *bounds, int nbounds);
void wa_metric_add(struct wa_metric *m, double v);
void wa_metric_set(struct wa_metric *m, double v);
void wa_metric_observe(struct wa_metric *m, double v);
/* Writes the file when it is due (call often), or now. */
void wa_metrics_tick(void);
void wa_metrics_write(void);
/* SIGUSR2 writes the file now; mu: the lock of other threads, or NULL. */
void wa_metrics_on_usr2(pthread_mutex_t *mu);

#endif
