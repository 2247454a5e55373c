<?php

declare(strict_types=1);

namespace Idverify;

/** Anything this client throws: a transport failure (no answer) is this class itself; an API answer is ApiError. */
class IdverifyException extends \RuntimeException
{
}
