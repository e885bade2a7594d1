{
  # The shipped build: `npm install` falls back to it when no prebuild loads, and prebuildify runs it.
  # Every file list and flag comes from scripts/native-sources.cjs (shared with CMakeLists.txt and the cross-build
  # scripts). The C libraries are compiled here from the pinned sources in cdeps/src (scripts/fetch-cdeps.mjs
  # extracts them on first use; the npm tarball ships them), so a source build needs only a C/C++ compiler.
  # Per-OS settings: GCC/Clang flags (Linux, FreeBSD), xcode_settings (macOS), msvs_settings (Visual Studio).
  "variables": {
    "panto_x86%": "<!(node -p \"['x64','ia32'].includes(process.env.npm_config_arch || process.arch) ? 1 : 0\")",
    "panto_obj_ext%": "<!(node -p \"process.platform === 'win32' ? 'obj' : 'o'\")",
    "panto_jpeg_simd%": "<!(node -p \"const a = process.env.npm_config_arch || process.arch; a === 'arm64' ? 'arm64' : a === 'x64' && require('./scripts/native-sources.cjs').hasNasm() ? 'x64' : 'none'\")"
  },
  "target_defaults": {
    "defines": ["<!@(node -p \"require('./scripts/native-sources.cjs').defines.join(' ')\")"],
    "cflags!": ["-fno-exceptions", "-fno-rtti"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
    "xcode_settings": {
      "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
      "GCC_INLINES_ARE_PRIVATE_EXTERN": "YES",
      "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
      "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
      "GCC_OPTIMIZATION_LEVEL": "3"
    },
    "msvs_settings": {
      "VCCLCompilerTool": {
        "ExceptionHandling": 1,
        "AdditionalOptions": ["/utf-8", "/Zc:__cplusplus"]
      }
    },
    "conditions": [
      ["OS=='win'", { "defines": ["_HAS_EXCEPTIONS=1", "NOMINMAX", "WIN32_LEAN_AND_MEAN", "_CRT_SECURE_NO_WARNINGS"] }]
    ]
  },
  "targets": [
    {
      "target_name": "panto_webp",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libwebp.sources().join(' ')\")"],
      "include_dirs": ["<!@(node -p \"require('./scripts/native-sources.cjs').libwebp.includeDirs().join(' ')\")"],
      "defines": ["<!@(node -p \"require('./scripts/native-sources.cjs').libwebp.threadDefines.join(' ')\")"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cdepsCflags.join(' ')\")"],
      "msvs_settings": { "VCCLCompilerTool": { "WarningLevel": 0 } },
      "conditions": [["panto_x86==1", { "defines": ["WEBP_HAVE_SSE41"] }]]
    },
    {
      "target_name": "panto_webp_sse41",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libwebp.sse41Sources().join(' ')\")"],
      "include_dirs": ["<!@(node -p \"require('./scripts/native-sources.cjs').libwebp.includeDirs().join(' ')\")"],
      "defines": ["<!@(node -p \"require('./scripts/native-sources.cjs').libwebp.threadDefines.join(' ')\")"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cdepsCflags.join(' ')\")"],
      "msvs_settings": { "VCCLCompilerTool": { "WarningLevel": 0 } },
      "conditions": [
        ["panto_x86==1", {
          "defines": ["WEBP_HAVE_SSE41"],
          "cflags": ["-msse4.1"],
          "xcode_settings": { "OTHER_CFLAGS": ["-msse4.1"] }
        }]
      ]
    },
    {
      "target_name": "panto_deflate",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libdeflate.sources().join(' ')\")"],
      "include_dirs": ["<!@(node -p \"require('./scripts/native-sources.cjs').libdeflate.includeDirs().join(' ')\")"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cdepsCflags.join(' ')\")"],
      "msvs_settings": { "VCCLCompilerTool": { "WarningLevel": 0 } },
      "conditions": [
        ["panto_x86==1", {
          "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libdeflate.x86Sources().join(' ')\")"]
        }, {
          "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libdeflate.armSources().join(' ')\")"]
        }]
      ]
    },
    {
      "target_name": "panto_zlib",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').zlib.sources().join(' ')\")"],
      "defines": ["<!@(node -p \"require('./scripts/native-sources.cjs').zlib.defines.join(' ')\")"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cdepsCflags.join(' ')\")"],
      "msvs_settings": { "VCCLCompilerTool": { "WarningLevel": 0 } }
    },
    {
      # libjpeg-turbo: x86-64 SIMD is NASM (built only when nasm is on PATH; otherwise the C-only dispatcher, same
      # output bytes since we use the ISLOW DCT), aarch64 NEON is C intrinsics, anything else C-only.
      "target_name": "panto_jpeg",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.sources().join(' ')\")"],
      "include_dirs": ["<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.includeDirs().join(' ')\")"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cdepsCflags.join(' ')\")"],
      "msvs_settings": { "VCCLCompilerTool": { "WarningLevel": 0 } },
      "conditions": [
        ["panto_jpeg_simd=='x64'", {
          "defines": ["WITH_SIMD"],
          "sources": [
            "<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.x64Sources().join(' ')\")",
            "<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.x64AsmSources().join(' ')\")"
          ],
          "rules": [{
            "rule_name": "nasm",
            "extension": "asm",
            "inputs": [],
            "outputs": ["<(INTERMEDIATE_DIR)/<(RULE_INPUT_ROOT).<(panto_obj_ext)"],
            "action": [
              "nasm",
              "<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.nasmFlags(({ darwin: 'macho64', win32: 'win64' })[process.platform] || 'elf64').join(' ')\")",
              "-o", "<(INTERMEDIATE_DIR)/<(RULE_INPUT_ROOT).<(panto_obj_ext)", "<(RULE_INPUT_PATH)"
            ],
            "message": "NASM <(RULE_INPUT_PATH)",
            "process_outputs_as_sources": 1
          }]
        }],
        ["panto_jpeg_simd=='arm64'", {
          "defines": ["WITH_SIMD", "NEON_INTRINSICS"],
          "include_dirs": ["<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.arm64IncludeDirs().join(' ')\")"],
          "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.arm64Sources().join(' ')\")"]
        }],
        ["panto_jpeg_simd=='none'", {
          "sources": ["<!@(node -p \"require('./scripts/native-sources.cjs').libjpegTurbo.noSimdSources().join(' ')\")"]
        }]
      ]
    },
    {
      "target_name": "panto_media",
      "dependencies": ["panto_zlib", "panto_deflate", "panto_jpeg", "panto_webp", "panto_webp_sse41"],
      "sources": [
        "<!@(node -p \"require('./scripts/native-sources.cjs').binding.join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').core.join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').cdeps.join(' ')\")"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').coreIncludeDirs.join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').includeDirs().join(' ')\")"
      ],
      "defines": ["<!@(node -p \"require('./scripts/native-sources.cjs').bindingDefines.join(' ')\")"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cflags.join(' ')\")"],
      "cflags_cc": ["<!@(node -p \"require('./scripts/native-sources.cjs').cflags.join(' ')\")"],
      "conditions": [
        ["OS=='linux' or OS=='freebsd'", {
          "ldflags": [
            "-Wl,--version-script=<(module_root_dir)/<!(node -p \"require('./scripts/native-sources.cjs').exportsMap\")",
            "<!@(node -p \"require('./scripts/native-sources.cjs').gcSectionsLdflags.elf.join(' ')\")"
          ],
          "libraries": ["-lpthread", "-lm"],
          "cflags_cc": ["<!@(node -p \"require('./scripts/native-sources.cjs').gccCflags.join(' ')\")"]
        }],
        ["OS=='mac'", {
          "xcode_settings": {
            "OTHER_LDFLAGS": [
              "-Wl,-exported_symbols_list,<(module_root_dir)/<!(node -p \"require('./scripts/native-sources.cjs').exportsList\")",
              "<!@(node -p \"require('./scripts/native-sources.cjs').gcSectionsLdflags.macho.join(' ')\")"
            ]
          }
        }]
      ]
    }
  ]
}
