/* lanyfs -- placeholder until the inspection commands land. */
int main(void)
{
    return 1;
}
