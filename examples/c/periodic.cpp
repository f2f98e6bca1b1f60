// tempi from C++17: the C API's handles held by std::unique_ptr with their free calls, a
// thread body that is a captureless lambda, and a status turned into an exception. Two
// periodic threads under EDF (U = 0.9) run for 100 ms of virtual time without a miss.
//
//   g++ -std=c++17 -Iinclude examples/c/periodic.cpp $(pkg-config --cflags --libs tempi) -o periodic
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "tempi.h"

namespace {

constexpr uint64_t ms = 1000000;

void check(tempi_status status, const char *what) {
    if (status != TEMPI_OK) {
        throw std::runtime_error(std::string(what) + ": " + tempi_status_str(status) + ": " + tempi_last_error());
    }
}

struct runtime_free {
    void operator()(tempi_runtime *rt) const { tempi_runtime_free(rt); }
};
struct outcome_free {
    void operator()(tempi_outcome *o) const { tempi_outcome_free(o); }
};

struct task {
    const char *name;
    uint64_t period_ns;
    uint64_t wcet_ns;
};

}  // namespace

int main() {
    try {
        tempi_runtime_params rp;
        check(tempi_runtime_params_init(&rp), "tempi_runtime_params_init");
        rp.scheduler = "edf";
        tempi_runtime *raw = nullptr;
        check(tempi_runtime_new(&rp, &raw), "tempi_runtime_new");
        std::unique_ptr<tempi_runtime, runtime_free> rt(raw);

        static const task set[] = {{"control", 5 * ms, 2 * ms}, {"logger", 10 * ms, 5 * ms}};
        for (const task &t : set) {
            tempi_thread_params tp;
            check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
            tp.name = t.name;
            tp.timing = TEMPI_PERIODIC;
            tp.period_ns = t.period_ns;
            tp.wcet_ns = t.wcet_ns;
            auto body = [](tempi_ctx *cx, void *userdata) {
                (void)tempi_work(cx, static_cast<const task *>(userdata)->wcet_ns);
            };
            check(tempi_runtime_spawn(rt.get(), &tp, body, const_cast<task *>(&t), nullptr), "tempi_runtime_spawn");
        }
        tempi_outcome *out_raw = nullptr;
        check(tempi_runtime_run(rt.get(), 100 * ms, &out_raw), "tempi_runtime_run");
        std::unique_ptr<tempi_outcome, outcome_free> out(out_raw);
        size_t n = 0;
        check(tempi_outcome_thread_count(out.get(), &n), "tempi_outcome_thread_count");
        for (size_t i = 0; i < n; i++) {
            tempi_thread_stats t;
            t.size = sizeof t;
            check(tempi_outcome_thread(out.get(), i, &t), "tempi_outcome_thread");
            std::printf("%s: %llu jobs, %llu misses\n", t.name, static_cast<unsigned long long>(t.completed),
                        static_cast<unsigned long long>(t.misses));
        }
        uint64_t misses = 0;
        check(tempi_outcome_total_misses(out.get(), &misses), "tempi_outcome_total_misses");
        std::printf("misses %llu\n", static_cast<unsigned long long>(misses));
        return misses == 0 ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
