{
  "targets": [
    {
      "target_name": "panto_media",
      "sources": [
        "<!@(node -p \"require('./scripts/native-sources.cjs').core.join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').cdeps.join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').binding.join(' ')\")"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').coreIncludeDirs.join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').includeDirs().join(' ')\")"
      ],
      "defines": [
        "<!@(node -p \"require('./scripts/native-sources.cjs').bindingDefines.join(' ')\")"
      ],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags": ["<!@(node -p \"require('./scripts/native-sources.cjs').cflags.join(' ')\")"],
      "cflags_cc": ["<!@(node -p \"require('./scripts/native-sources.cjs').cflags.join(' ')\")"],
      "libraries": [
        "<!@(node -p \"require('./scripts/native-sources.cjs').libs().join(' ')\")",
        "<!@(node -p \"require('./scripts/native-sources.cjs').ldflags.join(' ')\")"
      ],
      "xcode_settings": { "GCC_ENABLE_CPP_EXCEPTIONS": "YES" }
    }
  ]
}
