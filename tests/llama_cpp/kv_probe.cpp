// What llama.cpp allocates for a model's memory, to the byte: the oracle of hubdiff's GGUF KV figures.
//
// Loads a GGUF with no_alloc (tensor infos only: the data is never read), creates a context with the
// settings given, and prints the K, V, recurrent r and s bytes of its memory as one JSON line: the
// caches' own size_k_bytes / size_v_bytes / size_r_bytes / size_s_bytes (the sums of ggml_nbytes that
// llama.cpp logs in MiB), read through its internal classes. Built against llama.cpp's source by
// scripts/llama_cpp_kv.py; never part of the suite.
//
//   kv_probe MODEL.gguf N_CTX N_SEQ TYPE_K TYPE_V SWA_FULL N_UBATCH
#define private public  // the caches' byte counts are private members: this is a test oracle
#include "llama-kv-cache.h"
#include "llama-kv-cache-iswa.h"
#include "llama-memory-hybrid.h"
#include "llama-memory-recurrent.h"
#undef private
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static ggml_type kv_type(const char * name) {
    const struct { const char * name; ggml_type type; } types[] = {
        {"f32", GGML_TYPE_F32}, {"f16", GGML_TYPE_F16}, {"bf16", GGML_TYPE_BF16}, {"q8_0", GGML_TYPE_Q8_0},
        {"q4_0", GGML_TYPE_Q4_0}, {"q4_1", GGML_TYPE_Q4_1}, {"iq4_nl", GGML_TYPE_IQ4_NL},
        {"q5_0", GGML_TYPE_Q5_0}, {"q5_1", GGML_TYPE_Q5_1},
    };
    for (const auto & t : types) {
        if (std::strcmp(t.name, name) == 0) {
            return t.type;
        }
    }
    std::fprintf(stderr, "unknown cache type %s\n", name);
    std::exit(2);
}

static std::string last_error;

static void on_log(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR) {
        last_error += text;
    }
}

int main(int argc, char ** argv) {
    if (argc != 8) {
        std::fprintf(stderr, "usage: %s MODEL N_CTX N_SEQ TYPE_K TYPE_V SWA_FULL N_UBATCH\n", argv[0]);
        return 2;
    }
    llama_log_set(on_log, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.no_alloc = true;
    mp.load_mode = LLAMA_LOAD_MODE_NONE;  // nothing mapped: the tensor data is never read
    mp.lazy_mode = LLAMA_LAZY_MODE_OFF;
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        std::fprintf(stderr, "model: %s", last_error.c_str());
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t) std::atoi(argv[2]);
    cp.n_seq_max = (uint32_t) std::atoi(argv[3]);
    cp.type_k = kv_type(argv[4]);
    cp.type_v = kv_type(argv[5]);
    cp.swa_full = std::atoi(argv[6]) != 0;
    cp.n_ubatch = (uint32_t) std::atoi(argv[7]);
    cp.n_batch = cp.n_ubatch;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    cp.kv_unified = false;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        std::fprintf(stderr, "context: %s", last_error.c_str());
        return 1;
    }
    llama_memory_i * memory = llama_get_memory(ctx);
    size_t k = 0, v = 0, r = 0, s = 0;
    auto add_kv = [&](const llama_kv_cache * cache) {
        if (cache) {
            k += cache->size_k_bytes();
            v += cache->size_v_bytes();
        }
    };
    auto add_state = [&](const llama_memory_recurrent * state) {
        if (state) {
            r += state->size_r_bytes();
            s += state->size_s_bytes();
        }
    };
    const char * kind = "none";
    if (auto * cache = dynamic_cast<llama_kv_cache *>(memory)) {
        kind = "kv";
        add_kv(cache);
    } else if (auto * iswa = dynamic_cast<llama_kv_cache_iswa *>(memory)) {
        kind = "iswa";
        add_kv(iswa->get_base());
        add_kv(iswa->get_swa());
    } else if (auto * hybrid = dynamic_cast<llama_memory_hybrid *>(memory)) {
        kind = "hybrid";
        add_kv(hybrid->get_mem_attn());
        add_state(hybrid->get_mem_recr());
    } else if (auto * recurrent = dynamic_cast<llama_memory_recurrent *>(memory)) {
        kind = "recurrent";
        add_state(recurrent);
    } else if (memory) {
        kind = "other";
    }
    std::printf("{\"memory\": \"%s\", \"n_ctx\": %u, \"k_bytes\": %zu, \"v_bytes\": %zu, \"r_bytes\": %zu, \"s_bytes\": %zu}\n",
                kind, llama_n_ctx(ctx), k, v, r, s);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
