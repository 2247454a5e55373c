<?php
// For use without Composer: require this file, then `new Idverify\Client(...)`.
// (With Composer, its own PSR-4 autoloader from composer.json does the same.)
spl_autoload_register(static function (string $class): void {
    $prefix = 'Idverify\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
